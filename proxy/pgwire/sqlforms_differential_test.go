package pgwire

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"countwall/pgtypes"
)

// The SQL-forms differential test: the forms drivers and BI tools write
// (= ANY over arrays and array parameters, casts, GROUP BY and ORDER BY
// positions, the count anywhere in the select list, the names of function
// columns) run against countwall (exact mechanism) and PostgreSQL on table
// m of the parameter-type test; each must give the same rows and column
// names, or an error of the same SQLSTATE.

// formCase is one statement with its parameters (text unless formats say).
type formCase struct {
	sql       string
	oids      []uint32
	formats   []int16
	values    [][]byte
	namesOnly bool // the values are the session's own (current_user, version)
	binaryOut bool // the answer is asked for in binary
}

// formAnswer is what one side gave.
type formAnswer struct {
	code  string
	names []string
	types []uint32
	rows  []string
}

func formCorpus() []formCase {
	var out []formCase
	add := func(sql string, vals ...string) {
		c := formCase{sql: sql}
		for _, v := range vals {
			c.oids = append(c.oids, 0)
			if v == "NULL" {
				c.values = append(c.values, nil)
			} else {
				c.values = append(c.values, []byte(v))
			}
		}
		out = append(out, c)
	}
	w := "SELECT COUNT(*) FROM m WHERE "
	for _, cond := range []string{"age = ANY(ARRAY[0, 30, 31])", "age = ANY('{0,30}')", "age = ANY('{0,30}'::int[])",
		"age = ANY('{0,NULL}'::bigint[])", "NOT (age = ANY('{0,NULL}'))", "age <> ALL('{0,30}')", "age <> ALL('{0,NULL}')",
		"NOT (age <> ALL('{0,NULL}'))", "age = ANY('{}')", "NOT (age = ANY('{}'))", "age <> ALL('{}'::int[])",
		`label = ANY('{a,"ab  ",NULL}')`, "label = ANY(ARRAY['a', 'b'])", "score = ANY('{0.1,NaN}')", "age = ANY(ARRAY[1.5, 30])",
		"age = SOME(ARRAY[30])", "age = ANY('{0,x}')", "label = ANY(CAST('{a,b}' AS text[]))",
		"age = '30'::int", "age = CAST('30' AS bigint)", "age = 30.5::int", "age = 29.5::int", "age = -30::int",
		"label = 30::text", "label = CAST('abc' AS VARCHAR(2))", "label = 'abc'::char", "age = 'x'::int", "CAST(age AS bigint) = 30",
		"age IN ('0'::int, 30)", "score < '1'::float8", "score = 0.1::real::float8", "score = 0.1::real", "label = 'ab  '::char(4)::text",
		"label = 007::text", "label = -0.50::text", "age = 0.1::real::numeric::int",
		// NULL arrays, empty typed ones, and ARRAY[...] of quoted constants, which is text[].
		"age = ANY(NULL)", "age <> ALL(NULL)", "NOT (age = ANY(NULL))", "NOT (age <> ALL(NULL))", "age = ANY(NULL::int[])",
		"age = ANY(NULL::text[])", "age = ANY(CAST(NULL AS bigint[]))", "label = ANY(NULL)", "age = ANY((NULL))",
		"age = ANY('{NULL}'::text[])", "age = ANY(ARRAY[NULL])", "age = ANY(ARRAY[NULL, 30])", "age = ANY(ARRAY['30', 31])",
		"age = ANY(ARRAY['30','31'])", "label = ANY(ARRAY['a','x'])", "label = ANY(ARRAY['a',NULL])", "NOT (label = ANY(ARRAY['a',NULL]))",
		"age = ANY(ARRAY[]::int[])", "age <> ALL(ARRAY[]::int[])", "NOT (age <> ALL(ARRAY[]::int[]))", "age = ANY(ARRAY[]::text[])",
		"age = ANY('{}'::text[])", "label = ANY('{}'::text[])", "age = ANY(ARRAY[])", "age = ANY(ARRAY[NULL]::int[])", "age = ANY((ARRAY[30]))"} {
		add(w + cond)
	}
	for _, v := range []string{"{0,30}", "{}", "{0,NULL}", "NULL", "{ 30 , 31 }", "{0,"} {
		add(w+"age = ANY($1)", v)
		add(w+"NOT (age = ANY($1))", v)
		add(w+"age <> ALL($1)", v)
	}
	add(w+"label = ANY($1)", `{a,"ab  ",NULL,"NULL"}`)
	add(w+"score = ANY($1)", "{0.1,30.5}")
	add(w+"age = ANY($1::int[])", "{30,0}")
	add(w+"age = ANY($1::int[])", "{30,0.5}")
	add(w+"label = $1::text", "a")
	add(w+"label = CAST($1 AS VARCHAR)", "a")
	add(w+"age = $1::int", "30")
	for _, oid := range []uint32{1016, 1007, 1005, 1231, 1009, 20} {
		out = append(out, formCase{sql: w + "age = ANY($1)", oids: []uint32{oid}, values: [][]byte{[]byte("{0,30}")}})
	}
	out = append(out, formCase{sql: w + "age = ANY($1)", oids: []uint32{1016}, formats: []int16{1}, values: [][]byte{binaryInt8Array(0, 30, 31)}})
	out = append(out, formCase{sql: w + "age = ANY($1)", oids: []uint32{1016}, formats: []int16{1}, values: [][]byte{binaryInt8Array()}})
	// g's columns have declared domains, every value of which occurs.
	for _, q := range []string{"SELECT sex, COUNT(*) FROM g GROUP BY 1 ORDER BY 1", "SELECT age, COUNT(*) FROM g GROUP BY 1 ORDER BY 1 DESC",
		"SELECT sex, COUNT(*) FROM g GROUP BY 3", "SELECT sex, COUNT(*) FROM g GROUP BY 2", "SELECT sex, COUNT(*) FROM g GROUP BY 0",
		"SELECT sex, COUNT(*) FROM g GROUP BY sex ORDER BY 5", "SELECT sex, COUNT(*) FROM g GROUP BY 1.5",
		"SELECT COUNT(*), sex FROM g GROUP BY sex ORDER BY sex", "SELECT COUNT(*), sex FROM g GROUP BY sex",
		"SELECT COUNT(*), age, sex FROM g GROUP BY age, sex ORDER BY 2, 3", "SELECT age, COUNT(*), sex FROM g GROUP BY 1, 3 ORDER BY 1, 3",
		"SELECT COUNT(*) AS n, sex FROM g WHERE age = ANY('{1,3}') GROUP BY 2", "SELECT CAST(age AS VARCHAR), COUNT(*) FROM g GROUP BY age ORDER BY age",
		"SELECT sex::text, COUNT(*) FROM g GROUP BY sex::text ORDER BY 1", "SELECT CAST(age AS VARCHAR), COUNT(*) FROM g GROUP BY 1",
		"SELECT COUNT(*), age::text FROM g GROUP BY 2", "SELECT COUNT(DISTINCT id), sex FROM g GROUP BY 2",
		// +1 is a constant, not a position; (1) is a position.
		"SELECT sex, COUNT(*) FROM g GROUP BY +1", "SELECT sex, COUNT(*) FROM g GROUP BY sex, +1", "SELECT COUNT(*) FROM g GROUP BY (1)",
		"SELECT sex, COUNT(*) FROM g GROUP BY (1) ORDER BY (1) DESC", "SELECT COUNT(*) FROM g GROUP BY NULL", "SELECT COUNT(*) FROM g GROUP BY true",
		"SELECT sex, COUNT(*) FROM g GROUP BY 1 ORDER BY +5, 1", "SELECT sex, COUNT(*) FROM g GROUP BY 1 ORDER BY 1+0, 1 DESC",
		"SELECT sex, COUNT(*) FROM g GROUP BY 1 ORDER BY NULL", "SELECT COUNT(*) FROM g GROUP BY -1",
		"SELECT COUNT(*), sex FROM g WHERE age = ANY($1) GROUP BY sex"} {
		add(q)
	}
	out[len(out)-1].oids, out[len(out)-1].values = []uint32{0}, [][]byte{[]byte("{1,2}")}
	// Group columns in binary: bigint, text, and a cast's varchar.
	for _, q := range []string{"SELECT age, COUNT(*) FROM g GROUP BY age ORDER BY age", "SELECT sex, age, COUNT(*) FROM g GROUP BY 1, 2 ORDER BY 1, 2",
		"SELECT CAST(age AS VARCHAR), COUNT(*) FROM g GROUP BY 1", "SELECT COUNT(*), age::text FROM g GROUP BY 2", "SELECT age::bigint, COUNT(*) FROM g GROUP BY 1"} {
		out = append(out, formCase{sql: q, binaryOut: true})
	}
	add("SELECT age::bigint, COUNT(*) FROM g GROUP BY 1 ORDER BY 1")
	out = append(out, executeCorpus()...)
	for _, q := range []string{"SELECT current_database()", "SELECT current_schema()", "SELECT current_user", "SELECT version()",
		"SELECT session_user", "SELECT current_catalog", "SELECT pg_catalog.current_database()"} {
		out = append(out, formCase{sql: q, namesOnly: true})
	}
	return out
}

// executeCorpus PREPAREs statements with typed parameters and EXECUTEs
// them with arguments PostgreSQL casts to those types as an assignment
// does: a number rounded to an integer, character's padding dropped for
// text, a type with no such cast refused.
func executeCorpus() []formCase {
	var out []formCase
	prepare := map[string]string{
		"pi": "PREPARE pi(int) AS SELECT COUNT(*) FROM m WHERE age = $1", "ps": "PREPARE ps(smallint) AS SELECT COUNT(*) FROM m WHERE age = $1",
		"pn": "PREPARE pn(numeric) AS SELECT COUNT(*) FROM m WHERE age = $1", "pf": "PREPARE pf(float8) AS SELECT COUNT(*) FROM m WHERE score = $1",
		"pl": "PREPARE pl(text) AS SELECT COUNT(*) FROM m WHERE label = $1",
	}
	for _, name := range []string{"pi", "ps", "pn", "pf", "pl"} {
		out = append(out, formCase{sql: prepare[name]})
	}
	for _, e := range []string{"pi(30.5)", "pi(29.5)", "pi(-4.5)", "pi(-(4.5)::int)", "pi(30.5::float8)", "pi(31.5::float8)",
		"pi('30')", "pi('30.5')", "pi(3000000000)", "pi('30'::text)", "pi(-'30')", "pi(+'30')", "pi(NULL)", "pi(CAST(30.4 AS numeric))",
		"pi(1e1)", "pi((30))", "pi(30, 31)", "pi()", "ps(70000)", "ps(30.5)", "pn(30)", "pn(30.0)", "pf(30.5)", "pf(0.1::real)", "pf(30)",
		"pl('ab  '::char(4))", "pl('a')", "pl(007)", "pl('abc'::varchar(1))", "pl(NULL)", "nowhere(1)"} {
		out = append(out, formCase{sql: "EXECUTE " + e})
	}
	// EXECUTE binds no parameters of its own: PostgreSQL types $1 by the
	// Parse message alone and refuses it when EXECUTE runs.
	out = append(out, formCase{sql: "EXECUTE pi($1)", oids: []uint32{23}, values: [][]byte{[]byte("30")}},
		formCase{sql: "EXECUTE pi($1::int)", oids: []uint32{20}, values: [][]byte{[]byte("30")}})
	return out
}

// binaryInt8Array is an int8[] in binary, as pgx sends a []int64.
func binaryInt8Array(vals ...int64) []byte {
	b := binary.BigEndian.AppendUint32(nil, 1)
	if len(vals) == 0 {
		b = binary.BigEndian.AppendUint32(nil, 0)
	}
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, 20)
	if len(vals) == 0 {
		return b
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(vals)))
	b = binary.BigEndian.AppendUint32(b, 1)
	for _, v := range vals {
		b = binary.BigEndian.AppendUint32(b, 8)
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	return b
}

func formExec(ctx context.Context, conn *pgconn.PgConn, c formCase) formAnswer {
	var resultFormats []int16
	if c.binaryOut {
		resultFormats = []int16{1}
	}
	res := conn.ExecParams(ctx, c.sql, c.values, c.oids, c.formats, resultFormats).Read()
	if res.Err != nil {
		if pe, ok := res.Err.(*pgconn.PgError); ok {
			return formAnswer{code: pe.Code}
		}
		return formAnswer{code: "conn: " + res.Err.Error()}
	}
	var a formAnswer
	for _, f := range res.FieldDescriptions {
		a.names = append(a.names, f.Name)
		a.types = append(a.types, f.DataTypeOID)
	}
	for _, r := range res.Rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = fmt.Sprintf("%q", v)
			if v == nil {
				cells[i] = "NULL"
			}
		}
		a.rows = append(a.rows, strings.Join(cells, "|"))
	}
	if !strings.Contains(strings.ToUpper(c.sql), "ORDER BY") {
		sort.Strings(a.rows)
	}
	return a
}

// formsAgree compares two answers: the same SQLSTATE, column names and
// types (a group column has the column's type, or its cast's), and rows.
// The session's own functions (current_user, ...) are answered by the
// catalog as text, where PostgreSQL's are of type name.
func formsAgree(c formCase, mine, theirs formAnswer) bool {
	if mine.code != theirs.code || fmt.Sprint(mine.names) != fmt.Sprint(theirs.names) || len(mine.types) != len(theirs.types) {
		return false
	}
	for i := range mine.types {
		if mine.types[i] != theirs.types[i] && !(c.namesOnly && mine.types[i] == oidText && theirs.types[i] == oidName) {
			return false
		}
	}
	return c.namesOnly || fmt.Sprint(mine.rows) == fmt.Sprint(theirs.rows)
}

// oidName is PostgreSQL's name type.
const oidName = uint32(pgtypes.Name)

func TestPostgresSQLFormsDifferential(t *testing.T) {
	ctx := context.Background()
	_, _, mine, theirs := formsConns(t)
	counted := 0
	for _, c := range formCorpus() {
		a, b := formExec(ctx, mine, c), formExec(ctx, theirs, c)
		if !formsAgree(c, a, b) {
			t.Errorf("%s %v %q: countwall %+v, PostgreSQL %+v", c.sql, c.oids, c.values, a, b)
			continue
		}
		if a.code == "" {
			counted++
		}
		if len(c.oids) > 0 {
			da, errA := mine.Prepare(ctx, "", c.sql, c.oids)
			dp, errB := theirs.Prepare(ctx, "", c.sql, c.oids)
			if (errA == nil) != (errB == nil) || (errA == nil && fmt.Sprint(da.ParamOIDs) != fmt.Sprint(dp.ParamOIDs)) {
				t.Errorf("%s %v: countwall describes %v (%v), PostgreSQL %v (%v)", c.sql, c.oids, da, errA, dp, errB)
			}
		}
	}
	t.Logf("%d statements alike, %d of them answered", len(formCorpus()), counted)
}

// groupRows fill table g: every value of its domains occurs, none is NULL.
const groupRows = `INSERT INTO g VALUES (1, 'F', 1), (2, 'F', 2), (3, 'M', 1), (4, 'M', 3), (5, 'F', 3), (6, 'M', 2), (7, 'F', 1);`

// startFormsServer serves tables m and g of the SQLite file at path with
// the exact mechanism.
func startFormsServer(t *testing.T, dir, path string) *testServer {
	t.Helper()
	verifier, err := NewVerifier(testPassword, 4096)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`database: %s
state: %s
mechanism: {name: exact}
analysts:
  %s:
    password: %q
tables:
  m:
    privacy_unit: id
    unit_keyed: true
  g:
    privacy_unit: id
    domains:
      sex: [F, M]
      age: {min: 1, max: 3}
`, path, filepath.Join(dir, "state.db"), testAnalyst, verifier)
	return serveConfigForTest(t, dir, body)
}

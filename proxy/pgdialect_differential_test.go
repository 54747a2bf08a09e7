package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"countwall/internal/pgtest"
	"countwall/pgerror"
	"countwall/pgtypes"
)

// The PostgreSQL dialect differential test: the same rows in the protected
// SQLite file and in a real PostgreSQL, and a generated corpus of COUNT
// statements (literals and numeric edge values, comments with every line
// ending, escapes and encodings, LIKE, arithmetic, bound parameters with
// and without declared types, comparisons no value satisfies under NOT,
// plain, grouped and as thresholds) sent to countwall's Engine under
// `exact` and to PostgreSQL. Each must get the same count from both, or a
// refusal of the same SQLSTATE class from both.

type dialectRow struct {
	id          int64
	age, income any // int64 or nil
	sex, suburb any // string or nil
	big         any // int64 or nil: bigint's edges, no declared range
	score       any // float64 or nil: doubles' edges
	sparse      any // int64, mostly nil
	measure     any // float64 or nil: what float8's input reads at its edges
}

// measureEdges are the values of the double precision column measure
// besides NULL: the float4 nearest 0.1 beside float8 0.1, the infinities,
// -0, the smallest denormal, the edges of the range, integers a double
// holds and one it rounds.
var measureEdges = []float64{0.1, float64(float32(0.1)), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 5e-324, 1e-310,
	1e300, -1e300, 30.5, 2.5, 16777216, 16777217, 9.223372036854776e18, 0, -30.5}

// bigEdges and scoreEdges are the values the arithmetic cases meet at the
// edges of bigint and double precision.
var (
	bigEdges   = []any{int64(math.MinInt64), int64(math.MaxInt64), int64(0), int64(-1), int64(1), int64(1<<53 + 1), -int64(1<<53 + 1), int64(1 << 62), nil}
	scoreEdges = []any{math.Copysign(0, -1), 0.0, 5e-324, -5e-324, 1e300, -1e300, 0.5, 1.5, 2.5, -0.5, -2.5, 3.5, math.MaxFloat64, 2.4999999999999996, nil, nil}
)

func dialectRows() []dialectRow {
	specials := []string{"O'Brien", `back\slash`, "café", "", "suburb_1%", "a_b", "x' OR age >= 0 --"}
	var rows []dialectRow
	for i := int64(1); i <= 2000; i++ {
		r := dialectRow{id: i, age: 17 + (i*7)%74, income: (i*37)%100000 - 5000, sex: []string{"F", "M"}[i%2],
			suburb: fmt.Sprintf("suburb_%02d", i%25), big: bigEdges[int(i)%len(bigEdges)], score: scoreEdges[int(i)%len(scoreEdges)]}
		if i%7 == 0 {
			r.score = float64(i%41) / 8
		}
		if i%10 == 0 {
			r.sparse = (i/10)%41 - 20
		}
		if i%11 != 0 {
			r.measure = measureEdges[int(i)%len(measureEdges)]
		}
		if i%97 == 0 {
			r.age = nil
		}
		if i%89 == 0 {
			r.suburb = nil
		}
		if i%53 == 0 {
			r.suburb = specials[int(i/53)%len(specials)]
		}
		rows = append(rows, r)
	}
	return rows
}

// dialectCase is one statement, with its bound parameters (text format)
// when it has any and the types its client declared for them (nil: none).
type dialectCase struct {
	sql  string
	args []*string
	oids []uint32
}

func textArgs(vals ...string) []*string {
	out := make([]*string, len(vals))
	for i := range vals {
		out[i] = &vals[i]
	}
	return out
}

// dialectCorpus generates the statements; seed 2026 gives the same corpus
// every run.
func dialectCorpus() []dialectCase {
	r := rand.New(rand.NewPCG(2026, 21))
	var out []dialectCase
	add := func(where string) {
		out = append(out, dialectCase{sql: "SELECT COUNT(*) FROM people WHERE " + where})
	}
	numbers := []string{"0", "-0", "30", "017", "30.0", "30.5", "-5000", "90", "91", "2147483647", "2147483648",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"1e3", "1.5e1", ".5", "5.", "1e-400", "1e400", "-1e400", "30.00000000000000000001", "29.99999999999999999999",
		"1E+1", "0.000", "99999999999999999999999999999999.5"}
	ops := []string{"=", "<>", "!=", "<", "<=", ">", ">="}
	for _, n := range numbers {
		for _, op := range ops {
			col := []string{"age", "income"}[r.IntN(2)]
			add(col + " " + op + " " + n)
		}
		add("age BETWEEN " + n + " AND 60")
		add("age NOT BETWEEN 20 AND " + n)
		add("age IN (" + n + ", 40, 41.5)")
		add("age NOT IN (" + n + ")")
		add("age = '" + n + "'")
	}
	add("income = 8200.0000000000000001")
	add("income = 8200.0000000000000000")
	for _, q := range []string{"'40'", "' 40 '", "'+40'", "'x'", "'30.5'", "''", "'4e1'", "'Infinity'", "'NaN'", "'-0'"} {
		add("age < " + q)
	}
	// Comments with every line ending, nested comments, comment marks in strings.
	for _, eol := range []string{"\n", "\r", "\r\n", "\f", "\v"} {
		add("sex = 'F' --c" + eol + " AND age > 50")
		add("sex = 'F' /* c" + eol + " */ AND age > 50")
		add("age > 50 --" + eol + "AND sex = 'M'")
	}
	add("sex = 'F' /* a /* b */ AND age > 50 */ AND age < 30")
	add("suburb = 'a -- b' OR sex = 'F'")
	add("suburb = '/* x */' OR age = 20")
	// Strings, escapes and encodings.
	for _, s := range []string{"O''Brien", `back\slash`, `x\`, "café", "", "suburb_03", "SUBURB_03", "suburb\\_03",
		"x' OR age >= 0 --", "é", "\xff", "caf\xc3", "a\u00a0b", "suburb_1%"} {
		lit := "'" + strings.ReplaceAll(s, "'", "''") + "'"
		if s == "O''Brien" {
			lit = "'O''Brien'"
		}
		add("suburb = " + lit)
		add("suburb <> " + lit)
		add("suburb > " + lit)
	}
	add(`sex = 'x\' OR age >= 0 --'`)
	add("suburb = 'suburb_' 'continued'")
	add("suburb = 'suburb_'\n'03'")
	add("suburb = 'suburb_'\r\n'03'")
	// LIKE.
	for _, p := range []string{"suburb\\_0%", "suburb_0%", "%\\%%", "%é", "caf_", "", "%", "\\", "abc\\", "a\\\\", "_%_", "suburb\\_1\\%"} {
		add("suburb LIKE '" + p + "'")
		add("suburb NOT LIKE '" + p + "'")
	}
	// Arithmetic and functions.
	for _, m := range []string{
		"age + 5 > 40", "age - 5 <= 30", "age * 2 = 60", "age / 2 = 20", "age % 7 = 3", "income % 3 = -1", "income / 3 < -100",
		"abs(income) < 1000", "abs(age - 40) < 5", "round(age / 2.0) = 20", "floor(age / 2.0) = 19", "ceil(age / 2.0) = 20",
		"length(suburb) = 9", "length(suburb) > 3", "length(lower(sex)) = 1", "age / 0 > 1", "age % 0 = 1",
		"income / 0.0 > 1", "length(age) > 1", "abs(sex) > 1", "age * 1.5 > 60", "age + 0.5 > 40", "100 / age > 2",
		"(age + 1) * 2 > 100", "age - -3 > 40", "income * 3 > 100000",
	} {
		add(m)
	}
	// Random combinations of the above kinds, to pass 500.
	leaves := []string{"age > 40", "sex = 'F'", "suburb = 'suburb_03'", "income < 0", "age IS NULL", "suburb IS NOT NULL",
		"age BETWEEN 30 AND 39", "suburb LIKE 'suburb\\_1%'", "age IN (20, 21, 22.0)", "income >= 50000.5"}
	for len(out) < 560 {
		a, b := leaves[r.IntN(len(leaves))], leaves[r.IntN(len(leaves))]
		switch r.IntN(3) {
		case 0:
			add(a + " AND " + b)
		case 1:
			add("(" + a + ") OR NOT (" + b + ")")
		default:
			add("NOT " + a)
		}
	}
	for _, m := range mathCases {
		add(m)
	}
	// Bound parameters, as text with no declared type: PostgreSQL types each
	// as the column it is compared with.
	for _, v := range []string{"40", " 40 ", "+40", "-5", "30.5", "x", "", "9223372036854775807", "9223372036854775808", "4e1", "NaN", "1e-400"} {
		out = append(out, dialectCase{sql: "SELECT COUNT(*) FROM people WHERE age > $1", args: textArgs(v)})
		out = append(out, dialectCase{sql: "SELECT COUNT(*) FROM people WHERE income = $1", args: textArgs(v)})
	}
	for _, v := range []string{"F", "é", "O'Brien", `back\slash`, "x' OR age >= 0 --", "\xff", ""} {
		out = append(out, dialectCase{sql: "SELECT COUNT(*) FROM people WHERE suburb = $1 OR sex = $1", args: textArgs(v)})
	}
	out = append(out, dialectCase{sql: "SELECT COUNT(*) FROM people WHERE age + $1 > 40", args: textArgs("5")})
	out = append(out, dialectCase{sql: "SELECT COUNT(*) FROM people WHERE score + $1 > 1", args: textArgs("0.5")})
	out = append(out, dialectCase{sql: "SELECT COUNT(*) FROM people WHERE age BETWEEN $1 AND $2", args: textArgs("30", "39")})
	out = append(out, dialectCase{sql: "SELECT COUNT(*) FROM people WHERE suburb LIKE $1", args: textArgs("suburb\\_1%")})
	out = append(out, dialectCase{sql: "SELECT COUNT(*) FROM people WHERE suburb LIKE $1", args: textArgs("abc\\")})
	out = append(out, neverCorpus()...)
	out = append(out, literalEdgeCorpus()...)
	out = append(out, declaredCorpus()...)
	return out
}

// neverWhere are conditions no value of the column satisfies (or every
// value does), under NOT and beside other conditions: unknown where the
// column is NULL, so that their NOT counts no NULL row.
func neverWhere() []string {
	var out []string
	for _, col := range []string{"age", "income", "measure", "big"} {
		for _, w := range []string{"NOT (%[1]s = 30.25)", "NOT (%[1]s = 30.25) AND %[1]s IS NULL", "NOT (%[1]s = 30.25) OR %[1]s IS NULL",
			"NOT (%[1]s <> 30.25)", "NOT (%[1]s < 9223372036854775808)", "NOT (%[1]s >= -9223372036854775809)",
			"NOT (%[1]s IN (1e30, 30.25))", "NOT (%[1]s NOT IN (30.25))", "NOT (%[1]s = 30.25 OR sex = 'F')",
			"NOT (%[1]s = 30.25 AND sex = 'F')", "NOT (%[1]s BETWEEN 30.25 AND 30.3)", "NOT (%[1]s NOT BETWEEN -1e30 AND 1e30)",
			"NOT (NOT (%[1]s = 30.25))", "NOT (%[1]s IN (1e400))", "NOT (%[1]s = 0.1e-16383)"} {
			out = append(out, fmt.Sprintf(w, col))
		}
	}
	return append(out, "NOT (measure > 'NaN')", "NOT (measure = 'NaN')", "NOT (measure <= 'NaN')", "NOT (measure < '-Infinity')")
}

// neverCorpus asks each of neverWhere as a count, grouped by sex (a
// declared domain), and as thresholds.
func neverCorpus() []dialectCase {
	var out []dialectCase
	for _, w := range neverWhere() {
		out = append(out,
			dialectCase{sql: "SELECT COUNT(*) FROM people WHERE " + w},
			dialectCase{sql: "SELECT sex, COUNT(*) FROM people WHERE " + w + " GROUP BY sex"},
			dialectCase{sql: "SELECT COUNT(*) > 1000 FROM people WHERE " + w},
			dialectCase{sql: "SELECT COUNT(*) >= 1782 FROM people WHERE " + w})
	}
	return out
}

// literalEdgeCorpus compares the numeric columns with constants at the
// edges of numeric's storage format and of double precision's range, and
// a double column with the text forms float8's input reads.
func literalEdgeCorpus() []dialectCase {
	var out []dialectCase
	add := func(where string) {
		out = append(out, dialectCase{sql: "SELECT COUNT(*) FROM people WHERE " + where})
	}
	for _, n := range []string{"1e-9999999", "1e-16383", "1e-16384", "0.1e-16383", "0e1000000000", "0e-16384", "0e1073741823",
		"1e131071", "9.9e131071", "1e131072", "1e-400", "1e400", "-1e400", "5e-324", "2e-324", "3e-324", "2.4703282292062327e-324",
		"2.4703282292062328e-324", "1e300", "-1e300", "1.7976931348623158e308", "1.7976931348623159e308", "0.1", "-0", "0.0",
		"9223372036854775807", "9223372036854775808", "-9223372036854775809", "99999999999999999999999999999",
		"9007199254740993", "16777217", "30.5"} {
		for _, col := range []string{"age", "score", "measure", "big"} {
			for _, op := range []string{"=", "<", ">=", "<>"} {
				add(col + " " + op + " " + n)
			}
		}
		add("measure IN (" + n + ", 2.5)")
		add("measure NOT BETWEEN " + n + " AND 1e300")
	}
	for _, q := range []string{"'NaN'", "'nan'", "'Infinity'", "'-inf'", "'0x10'", "' 1e-320 '", "'1e-400'", "'x'", "''",
		"'nan(1)'", "'0x1p-1074'", "'1_0'", "'+inf'", "'-0'"} {
		for _, op := range []string{"=", "<", ">", "<=", ">=", "<>"} {
			add("measure " + op + " " + q)
		}
		add("measure IN (" + q + ", 0.1)")
		add("measure NOT IN (" + q + ", 0.1)")
		add("measure BETWEEN " + q + " AND 'Infinity'")
		add("NOT (measure BETWEEN 0 AND " + q + ")")
		add("measure > -" + q)
		add("measure > +" + q)
	}
	return out
}

// declaredCorpus binds text-form parameters of every type a driver
// declares, against each column.
func declaredCorpus() []dialectCase {
	var out []dialectCase
	oids := []uint32{0, 16, 17, 18, 19, 20, 21, 23, 25, 114, 700, 701, 705, 1042, 1043, 1082, 1114, 1700, 2950, 3802}
	for _, oid := range oids {
		for _, col := range []string{"age", "big", "measure", "suburb"} {
			for _, v := range []string{"0.1", "30", "-5000", "x", "NaN", "suburb_03  ", "1e-400", "16777217", "9007199254740993", "suburb_0"} {
				out = append(out, dialectCase{sql: "SELECT COUNT(*) FROM people WHERE " + col + " < $1", args: textArgs(v), oids: []uint32{oid}})
				out = append(out, dialectCase{sql: "SELECT COUNT(*) FROM people WHERE NOT (" + col + " = $1)", args: textArgs(v), oids: []uint32{oid}})
			}
		}
	}
	return out
}

// mathCases are the arithmetic conditions (allow_math): the forms PostgreSQL
// computes in numeric, bigint's and double precision's edges, -0, the
// smallest denormal and 1e300, a mostly NULL column, and negations of each
// kind of comparison with a decimal.
var mathCases = []string{
	// numeric in PostgreSQL: refused (see refusedWherePostgresAnswers)
	"age * 0.1 = 0.3", "age / 3.0 = 10.33333333333333333333", "age % 2.5 = 0", "age % 0.5 = 0", "length(suburb) * 0.1 = 0.3",
	// an integer expression compared exactly with a decimal
	"age * 2 = 60.5", "age * 2 > 60.5", "age * 2 <= 60.5", "NOT (age * 2 = 60.5)", "NOT (age + 1 <> 30.5)", "age * 2 < 1e30",
	"age * 2 > 99999999999999999999", "age + 1 >= 30.00000000000000000001", "age - 1 = 29.0", "length(suburb) > 8.5",
	// bigint's edges: big has no declared range
	"abs(big) > 0", "big + 1 > 0", "big - 1 < 0", "big / -1 > 0", "big % -1 = 0", "big / 2 > 0", "big % 1000 = 1", "big * 1 > 0",
	"big * 2 > 0", "abs(big - 1) > 0", "big + 0 = 9223372036854775807", "big / 3 = 3074457345618258602", "big - 0 = -9223372036854775808",
	"floor(big) = 9007199254740992", "round(big) = 9223372036854775807", "ceil(big) > 1e18",
	// the error oracle of a bound: refused in every world
	"sex = 'F' AND abs(age - 40 + -9223372036854775808) > 0", "abs(age - 10 + -9223372036854775808) > 0",
	"abs(age - 17 + -9223372036854775808) > 0",
	// integer (32 bits): length
	"length(suburb) * 2 > 3", "length(suburb) * 3 > 3", "length(suburb) * 3000000000 > 3", "abs(length(suburb) - 9) = 0",
	// double precision: -0, 5e-324, 1e300, the largest double, ties
	"round(score) = 2", "round(score) = 0", "round(score) = -2", "round(score) = 4", "floor(score) = -1", "ceil(score) = 0",
	"ceil(score) = 3", "score + 0 = 0", "score - 0 < 0", "score + 1 > 0", "score - 1 < 0", "abs(score) > 1", "abs(score) = 0",
	"score * 1 = 5e-324", "score * 0 = 0", "score * -1 > 0", "round(score) > 1e299", "score + 1 > '0.5'", "round(age) = 30",
	"score * 0.5 > 0", "score / 2 > 0", "score * 2 > 0", "score * 10 > 0", "score / 1e-10 > 0", "1 / score > 0", "score % 2 = 0",
	"score + 1e300 > 0", "score + 0 > 1e-400", "score + 0 > 1e400", "score * 1.5 > 3", "floor(score) % 2 = 0",
	// a mostly NULL column with a declared range
	"sparse + 1 > 0", "sparse * 2 = 20", "abs(sparse) < 5", "sparse % 3 = 1", "sparse / 2 = -5", "round(sparse) = 3",
	"NOT (sparse * 2 > 10)", "100 / sparse > 2", "100 / (sparse + 21) > 2", "NOT (sparse + 1 = 0.5)",
}

// refusedWherePostgresAnswers are the arithmetic statements countwall
// refuses before the read where PostgreSQL, computing over these rows,
// answers: each with the one SQLSTATE docs/analyst.md documents for its
// construct. 0A000: arithmetic PostgreSQL computes in numeric. 22003: an
// expression that could overflow for some value of its column's declared
// range (or of bigint, or of a text's length) though no stored row does.
// 22012: a divisor that could be zero for some value of its column's
// declared range though no stored row's is. Any other divergence fails the
// test, and so does a change in these.
var refusedWherePostgresAnswers = map[string]pgerror.Code{
	"age * 0.1 = 0.3":                          pgerror.FeatureNotSupported,
	"age / 3.0 = 10.33333333333333333333":      pgerror.FeatureNotSupported,
	"age % 2.5 = 0":                            pgerror.FeatureNotSupported,
	"age % 0.5 = 0":                            pgerror.FeatureNotSupported,
	"length(suburb) * 0.1 = 0.3":               pgerror.FeatureNotSupported,
	"round(age / 2.0) = 20":                    pgerror.FeatureNotSupported,
	"floor(age / 2.0) = 19":                    pgerror.FeatureNotSupported,
	"ceil(age / 2.0) = 20":                     pgerror.FeatureNotSupported,
	"age * 1.5 > 60":                           pgerror.FeatureNotSupported,
	"age + 0.5 > 40":                           pgerror.FeatureNotSupported,
	"abs(age - 10 + -9223372036854775808) > 0": pgerror.NumericValueOutOfRange,
	"length(suburb) * 3 > 3":                   pgerror.NumericValueOutOfRange,
	"100 / age > 2":                            pgerror.DivisionByZero,
}

// dialectAnswer is what one side gave: a count (a threshold's true is 1),
// the counts of a GROUP BY's groups, or a SQLSTATE.
type dialectAnswer struct {
	count  int64
	groups map[string]int64 // nil unless grouped
	code   pgerror.Code
}

func (a dialectAnswer) String() string {
	switch {
	case a.code != "":
		return "SQLSTATE " + string(a.code)
	case a.groups != nil:
		return fmt.Sprint(a.groups)
	}
	return strconv.FormatInt(a.count, 10)
}

// knownDifferences are the statements where PostgreSQL's error depends on
// the rows and countwall's does not (no refusal may depend on the rows): a
// LIKE pattern ending in the escape character is refused by PostgreSQL only
// when some row's text matches up to it, and always by countwall. The test
// wants exactly these answers, so that any other divergence, or a change in
// these, fails it.
var knownDifferences = map[string][2]string{
	`SELECT COUNT(*) FROM people WHERE suburb LIKE 'abc\'`:     {"SQLSTATE 22025", "0"},
	`SELECT COUNT(*) FROM people WHERE suburb NOT LIKE 'abc\'`: {"SQLSTATE 22025", "1978"},
	`SELECT COUNT(*) FROM people WHERE suburb LIKE $1`:         {"SQLSTATE 22025", "0"}, // bound to abc\
}

// agree compares countwall's answer a with PostgreSQL's b. A group
// PostgreSQL leaves out (none of its rows matched) is countwall's 0, which
// answers every cell of the declared domain.
func agree(a, b dialectAnswer) bool {
	if a.code != "" || b.code != "" {
		return len(a.code) == 5 && len(b.code) == 5 && a.code[:2] == b.code[:2]
	}
	if (a.groups == nil) != (b.groups == nil) {
		return false
	}
	for g, n := range a.groups {
		if b.groups[g] != n {
			return false
		}
	}
	for g := range b.groups {
		if _, ok := a.groups[g]; !ok {
			return false
		}
	}
	return a.count == b.count
}

func TestPostgresDialectDifferential(t *testing.T) {
	srv := pgtest.Server(t)
	ctx := context.Background()
	dir := t.TempDir()
	rows := dialectRows()

	// The protected SQLite file and the PostgreSQL table hold the same rows.
	path := filepath.Join(dir, "protected.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE people (id INTEGER NOT NULL, age INTEGER, sex TEXT, suburb TEXT, income INTEGER, big INTEGER, score REAL, sparse INTEGER, measure REAL)`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := db.Exec(`INSERT INTO people VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.id, r.age, r.sex, r.suburb, r.income, r.big, r.score, r.sparse, r.measure); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	url := srv.NewDatabase(t)
	pg, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	if _, err := pg.Exec(ctx, `CREATE TABLE people (id bigint NOT NULL, age bigint, sex text, suburb text, income bigint, big bigint, score double precision, sparse bigint, measure double precision)`); err != nil {
		t.Fatal(err)
	}
	copyRows := make([][]any, len(rows))
	for i, r := range rows {
		copyRows[i] = []any{r.id, r.age, r.sex, r.suburb, r.income, r.big, r.score, r.sparse, r.measure}
	}
	if _, err := pg.CopyFrom(ctx, pgx.Identifier{"people"}, []string{"id", "age", "sex", "suburb", "income", "big", "score", "sparse", "measure"}, pgx.CopyFromRows(copyRows)); err != nil {
		t.Fatal(err)
	}

	body := fmt.Sprintf(`
database: %s
state: %s
mechanism: {name: exact}
tables:
  people:
    privacy_unit: id
    unit_keyed: true
    policy: {allow_like: true, allow_math: true}
    domains:
      age: {min: 0, max: 130}
      income: {min: -100000, max: 100000}
      sparse: {min: -20, max: 20}
      sex: [F, M]
`, path, filepath.Join(dir, "state.db"))
	cfg := loadConfigText(t, filepath.Join(dir, "countwall.yaml"), body)
	e, err := Open(ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.queueAnswerAudit = true
	session := e.NewSession("alice")
	defer session.Close()

	corpus := dialectCorpus()
	if len(corpus) < 500 {
		t.Fatalf("the corpus has %d statements, want at least 500", len(corpus))
	}
	diverged, answered := 0, 0
	for _, c := range corpus {
		mine := engineAnswer(ctx, t, session, c)
		if mine.code == "" {
			answered++
		}
		theirs := postgresCount(ctx, pg.PgConn(), c)
		if known, ok := knownDifferences[c.sql]; ok && (c.args == nil || *c.args[0] == `abc\`) {
			if mine.String() != known[0] || theirs.String() != known[1] {
				t.Errorf("%q %s: countwall %v, PostgreSQL %v; the known difference is %v", c.sql, argsText(c.args), mine, theirs, known)
			}
			continue
		}
		if code, ok := refusedWherePostgresAnswers[strings.TrimPrefix(c.sql, "SELECT COUNT(*) FROM people WHERE ")]; ok && c.args == nil {
			if mine.code != code || theirs.code != "" {
				t.Errorf("%q: countwall %v, PostgreSQL %v; want countwall's refusal %s where PostgreSQL answers", c.sql, mine, theirs, code)
			}
			continue
		}
		if !agree(mine, theirs) {
			diverged++
			t.Errorf("%q %s: countwall %v, PostgreSQL %v", c.sql, argsText(c.args), mine, theirs)
		}
	}
	t.Logf("%d statements (%d answered, the others refused), %d divergences", len(corpus), answered, diverged)
}

// engineAnswer runs a case through the Engine: prepared, its declared
// parameter types given, and executed.
func engineAnswer(ctx context.Context, t *testing.T, session *Session, c dialectCase) dialectAnswer {
	t.Helper()
	st := session.Prepare(c.sql)
	if c.oids != nil {
		types := make([]pgtypes.OID, len(c.oids))
		for i, o := range c.oids {
			types[i] = pgtypes.OID(o)
		}
		st.DeclareParams(types)
	}
	res, err := session.Execute(ctx, st, c.args)
	switch {
	case err != nil:
		return dialectAnswer{code: pgerror.SQLState(err)}
	case strings.Contains(c.sql, "GROUP BY"):
		groups := map[string]int64{}
		for _, row := range res.Rows {
			groups[row[0].Text] = row[1].Int
		}
		return dialectAnswer{groups: groups}
	case len(res.Rows) == 1:
		return dialectAnswer{count: res.Rows[0][0].Int}
	}
	t.Fatalf("%q: %d rows", c.sql, len(res.Rows))
	return dialectAnswer{}
}

// postgresCount sends a case to PostgreSQL: plain text over the simple
// protocol, or parameters as text over the extended one, with the types
// the case declares.
func postgresCount(ctx context.Context, conn *pgconn.PgConn, c dialectCase) dialectAnswer {
	var rr *pgconn.ResultReader
	var results []*pgconn.Result
	var err error
	if c.args == nil {
		results, err = conn.Exec(ctx, c.sql).ReadAll()
	} else {
		vals := make([][]byte, len(c.args))
		for i, a := range c.args {
			vals[i] = []byte(*a)
		}
		rr = conn.ExecParams(ctx, c.sql, vals, c.oids, nil, nil)
		res := rr.Read()
		results, err = []*pgconn.Result{res}, res.Err
	}
	switch {
	case err != nil:
		return dialectAnswer{code: pgerror.SQLState(err)}
	case len(results) != 1:
		return dialectAnswer{code: "XX000"}
	case strings.Contains(c.sql, "GROUP BY"):
		groups := map[string]int64{}
		for _, row := range results[0].Rows {
			n, _ := strconv.ParseInt(string(row[1]), 10, 64)
			groups[string(row[0])] = n
		}
		return dialectAnswer{groups: groups}
	case len(results[0].Rows) != 1:
		return dialectAnswer{code: "XX000"}
	}
	switch v := string(results[0].Rows[0][0]); v {
	case "t", "f": // a threshold
		return dialectAnswer{count: map[string]int64{"t": 1, "f": 0}[v]}
	default:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return dialectAnswer{code: "XX000"}
		}
		return dialectAnswer{count: n}
	}
}

func argsText(args []*string) string {
	if args == nil {
		return ""
	}
	var parts []string
	for _, a := range args {
		parts = append(parts, strconv.Quote(*a))
	}
	return "with $n = " + strings.Join(parts, ", ")
}

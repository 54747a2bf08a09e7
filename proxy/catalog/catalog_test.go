package catalog

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"countwall/pgerror"
	"countwall/pglex"
)

func testModel() *Model {
	return &Model{ServerVersion: "15.0 (countwall)", Tables: []Table{{Name: "people", Columns: []Column{
		{Name: "id", Type: BigInt, Unit: true}, {Name: "age", Type: BigInt, HasDomain: true, IsRange: true, Min: 0, Max: 120},
		{Name: "sex", Type: Text, HasDomain: true, Categories: []string{"F", "M"}}, {Name: "income", Type: Double}}}}}
}

func openTest(t *testing.T) *Catalog {
	t.Helper()
	c, err := Open(context.Background(), testModel())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// capturedStatements are the catalog statements psql 15 (\dt, \d, \d people,
// \d+ people, \dn, \l), SQLAlchemy 1.4 with psycopg2 (the inspector, pandas'
// read_sql), pgjdbc 42.5 (DatabaseMetaData as DBeaver and Metabase call it),
// pgx (LoadType) and pgcli 3.5 (its completion refresh; \dt, \d people, \l,
// \dn, \du through pgspecial) sent to PostgreSQL 15, logged by its
// log_statement.
func capturedStatements(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/captured.sql")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range strings.Split(string(b), "\n-- next\n") {
		if HandlesText(s) {
			out = append(out, s)
		}
	}
	return out
}

// TestEveryCapturedStatementIsAnswered: each statement real clients sent
// is recognised and answered.
func TestEveryCapturedStatementIsAnswered(t *testing.T) {
	c := openTest(t)
	stmts := capturedStatements(t)
	if len(stmts) < 38 {
		t.Fatalf("only %d captured statements are recognised as catalog statements", len(stmts))
	}
	for _, s := range stmts {
		var args []*string
		if strings.Contains(s, "$1") {
			v := "int8"
			switch {
			case strings.Contains(s, "oid=$1"):
				v = "20"
			case strings.Contains(s, "ANY($1)"):
				v = `{r,p,""}` // pgcli's kinds of relation, a list psycopg sends as an array
			case strings.Contains(s, "~) $1"):
				v = "^(people)$"
			}
			args = []*string{&v}
		}
		if _, err := c.Query(context.Background(), Session{Analyst: "alice"}, s, args); err != nil {
			t.Errorf("%.120s: %v", strings.Join(strings.Fields(s), " "), err)
		}
	}
}

func rowsText(res *Result) string {
	var lines []string
	for _, r := range res.Rows {
		var cells []string
		for i, v := range r {
			switch {
			case v.Null:
				cells = append(cells, "NULL")
			case res.Columns[i].Type == WireBool:
				cells = append(cells, fmt.Sprint(v.Bool))
			case res.Columns[i].Type == WireInt8:
				cells = append(cells, fmt.Sprint(v.Int))
			case res.Columns[i].Type == WireFloat8:
				cells = append(cells, fmt.Sprint(v.Float))
			default:
				cells = append(cells, v.Text)
			}
		}
		lines = append(lines, strings.Join(cells, "|"))
	}
	return strings.Join(lines, "\n")
}

// TestAnswers checks exact answers, including that no statistic of the
// protected data is told: a never-analysed table's reltuples -1, relpages 0,
// no pg_stats rows, n_live_tup 0, sizes 0.
func TestAnswers(t *testing.T) {
	c := openTest(t)
	tests := []struct{ sql, want string }{
		{`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind in ('r', 'p')`, "people"},
		{`SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_catalog.col_description(a.attrelid, a.attnum)
		  FROM pg_catalog.pg_attribute a WHERE a.attrelid = 'people'::regclass AND a.attnum > 0 ORDER BY a.attnum`,
			"id|bigint|false|privacy unit\nage|bigint|false|public domain: 0 to 120\nsex|text|false|public domain: F, M\nincome|double precision|false|NULL"},
		{`SELECT reltuples, relpages, relallvisible FROM pg_catalog.pg_class WHERE relname = 'people'`, "-1|0|0"},
		{`SELECT count(*) FROM pg_stats WHERE tablename = 'people'`, "0"},
		{`SELECT n_live_tup, n_dead_tup FROM pg_stat_user_tables`, "0|0"},
		{`SELECT pg_total_relation_size('people'::regclass), pg_relation_size(c.oid) FROM pg_class c`, "0|0"},
		{`SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = 'people' ORDER BY ordinal_position`,
			"id|bigint|YES\nage|bigint|YES\nsex|text|YES\nincome|double precision|YES"},
		{`SELECT table_schema, table_name, table_type FROM information_schema.tables`, "public|people|BASE TABLE"},
		{`SELECT current_database(), current_schema(), current_user, pg_catalog.version()`, "countwall|public|alice|PostgreSQL 15.0 (countwall)"},
		{`SELECT n.nspname FROM pg_namespace n WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' ORDER BY 1`, "public"},
		{`SELECT d.datname, pg_catalog.array_to_string(d.datacl, E'\n') FROM pg_catalog.pg_database d`, "countwall|NULL"},
		{`SELECT 1`, "1"},
		{`show transaction isolation level`, "read committed"},
		{`SELECT $1::text::regtype::oid`, "20"},
		{`SELECT x FROM pg_catalog.generate_series(1, 3) AS s(x)`, "1\n2\n3"},
		{`SELECT relname, obj_description(oid), col_description(oid, 1) FROM pg_class`, "people|NULL|privacy unit"},
		{`SELECT * FROM unnest(current_schemas(true))`, "pg_catalog\npublic"},
		{`SELECT relname FROM pg_class WHERE relkind = ANY('{r,p,""}')`, "people"},
		{`SELECT relname FROM pg_class WHERE relkind = ANY('{v,m}'::"char"[])`, ""},
		{`SELECT substring('abcdef' for 3), substring('abcdef' from 2 for 3), substring('abcdef' from 5), substring('abcdef', 2, 2)`, "abc|bcd|ef|bc"},
		{`SELECT count(*) FROM pg_auth_members`, "0"},
		{`SELECT 'people'::regclass::text, 20::regtype::text, oid::regtype::text FROM pg_type WHERE oid = to_regtype('double precision')`, "people|bigint|double precision"},
		{`SELECT typname FROM pg_type WHERE oid = ANY (SELECT atttypid FROM pg_attribute) ORDER BY 1`, "float8\nint8\ntext"},
		// quote_ident as PostgreSQL's: bare unless reserved, cased or not plain.
		{`SELECT quote_ident('sex'), quote_ident('default'), quote_ident('Sex'), quote_ident('a"b'), quote_ident(' and ')`, `sex|"default"|"Sex"|"a""b"|" and "`},
		{`SELECT relname AS "a "" and b" FROM pg_class`, "people"},
		// psql's \gdesc: a VALUES list whose alias names its columns.
		{"SELECT name AS \"Column\", pg_catalog.format_type(tp, tpm) AS \"Type\"\nFROM (VALUES ('age', '20'::pg_catalog.oid, -1), ('count', '20'::pg_catalog.oid, -1)) s(name, tp, tpm)", "age|bigint\ncount|bigint"},
		{`SELECT b FROM (VALUES (1, 'x'), (2, 'y')) AS v (a, b) WHERE a = 2`, "y"},
		{`SELECT column2 FROM (VALUES (1, 'x')) v`, "x"},
	}
	for _, tc := range tests {
		v := "bigint"
		res, err := c.Query(context.Background(), Session{Analyst: "alice"}, tc.sql, []*string{&v})
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if got := rowsText(res); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.sql, got, tc.want)
		}
	}
}

// TestRefusals: what the catalog does not model is refused with 0A000, and
// nothing outside its own tables can be reached.
func TestRefusals(t *testing.T) {
	c := openTest(t)
	for _, sql := range []string{
		"SELECT * FROM pg_authid",
		"SELECT pg_read_file('/etc/passwd')",
		"SELECT COUNT(*) FROM people JOIN pg_class ON true",
		"SELECT * FROM pg_class; SELECT 1",
		"SELECT load_extension('x') FROM pg_class",
		"SELECT * FROM sqlite_master, pg_class",
		`SELECT * FROM "SQLITE_MASTER", pg_class`,
		"SELECT * FROM main.cw_type_format, pg_class",
		"SELECT relname::circle FROM pg_class",
		"SELECT relname FROM pg_class WHERE relname @@ 'x'",
	} {
		_, err := c.Query(context.Background(), Session{}, sql, nil)
		if pgerror.SQLState(err) != pgerror.FeatureNotSupported {
			t.Errorf("%s: %v, want 0A000", sql, err)
		}
	}
	long := "SELECT relname FROM pg_class WHERE relname IN ('" + strings.Repeat("x", maxStatement) + "')"
	if _, err := c.Query(context.Background(), Session{}, long, nil); pgerror.SQLState(err) != pgerror.ProgramLimitExceeded {
		t.Errorf("a %d-byte statement: %v, want 54000", len(long), err)
	}
	c.timeout = 50 * time.Millisecond
	huge := "SELECT count(*) FROM generate_series(1, 10000) a, generate_series(1, 10000) b, generate_series(1, 10000) c"
	if _, err := c.Query(context.Background(), Session{}, huge, nil); pgerror.SQLState(err) != pgerror.QueryCanceled {
		t.Errorf("a statement running past the catalog's deadline: %v, want 57014", err)
	}
}

func TestHandles(t *testing.T) {
	tests := []struct {
		sql  string
		want bool
	}{
		{"SELECT relname FROM pg_class", true},
		{"SELECT * FROM unnest(current_schemas(true))", true}, // pgcli's search path
		{"SELECT * FROM unnest(ARRAY[1, 2])", false},
		{"SELECT COUNT(*) FROM people WHERE sex = current_user", false},
		{"select current_schema()", true},
		{"SELECT 1", true},
		{"select $1::text::regtype::oid;", true},
		{"SHOW TRANSACTION ISOLATION LEVEL", true},
		{"SELECT COUNT(*) FROM people", false},
		{"SELECT COUNT(*) FORM people", false},
		{"SELECT COUNT(*)", false},
		{"SELECT version()", false},
		{"SELECT current_setting('DateStyle')", false},
		{"SHOW budget", false},
		{"SELECT COUNT(*) FROM people WHERE age > 30 AND sex = 'F'", false},
		{"SELECT   Current_Schema()   ", true},
		{"SELECT x FROM PG_CATALOG.PG_CLASS", true},
		{`SELECT "current_user"`, true},
		{"SELECT /* a connection check padded with a comment */ 1", true},
		{`SELECT count(*) FROM "my where t" WHERE "a and b" = 'current_user'`, false},
		{"SELECT d.datname FROM pg_catalog.pg_database d WHERE d.datname ~ E'^(x)$'", true}, // psql's \l: read by the catalog's lexer only
	}
	for _, tc := range tests {
		got := HandlesText(tc.sql)
		if toks, err := pglex.Lex(tc.sql); err == nil {
			if byTokens := Handles(toks); byTokens != got {
				t.Errorf("%q: Handles of its tokens %v, HandlesText %v", tc.sql, byTokens, got)
			}
		}
		if got != tc.want {
			t.Errorf("HandlesText(%q) = %v, want %v", tc.sql, got, tc.want)
		}
	}
}

// TestArrayParameters: an array bound to $1 arrives in PostgreSQL's text
// form (psycopg sends pgcli's list of relation kinds so) and = ANY reads
// it; a malformed one is refused.
func TestArrayParameters(t *testing.T) {
	c := openTest(t)
	sql := `SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relkind = ANY($1) ORDER BY 1`
	tests := []struct {
		arg, want string
		code      pgerror.Code
	}{
		{`{r,p,f}`, "people", ""},
		{`{r,p,""}`, "people", ""},
		{`{v,m}`, "", ""},
		{`{"r"}`, "people", ""},
		{`{}`, "", ""},
		{`r`, "", pgerror.FeatureNotSupported},
	}
	for _, tc := range tests {
		arg := tc.arg
		res, err := c.Query(context.Background(), Session{}, sql, []*string{&arg})
		if tc.code != "" {
			if pgerror.SQLState(err) != tc.code {
				t.Errorf("ANY(%s): %v, want %s", tc.arg, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("ANY(%s): %v", tc.arg, err)
			continue
		}
		if got := rowsText(res); got != tc.want {
			t.Errorf("ANY(%s) = %q, want %q", tc.arg, got, tc.want)
		}
	}
}

// TestWholeRowQueries: navigators such as DBeaver read whole catalog rows
// (c.*, a.*) joined to their descriptions and dependencies; queries of that
// shape answer with every column the catalog models.
func TestWholeRowQueries(t *testing.T) {
	c := openTest(t)
	ctx := context.Background()
	ns := "2200"
	res, err := c.Query(ctx, Session{}, `select c.oid,c.*,t.relname as tabrelname,rn.nspname as tabrelnsp,d.description
		from pg_catalog.pg_class c
		left outer join pg_catalog.pg_class t on t.oid=c.reltoastrelid
		left outer join pg_catalog.pg_namespace rn on rn.oid=t.relnamespace
		left outer join pg_catalog.pg_description d on d.objoid=c.oid and d.objsubid=0 and d.classoid='pg_class'::regclass
		where c.relnamespace=$1 and c.relkind not in ('i','I','c')`, []*string{&ns})
	if err != nil || len(res.Rows) != 1 || len(res.Columns) != 1+len(columnNames("pg_catalog.pg_class"))+3 {
		t.Fatalf("tables: %v, %+v", err, res)
	}
	oid := "16384"
	res, err = c.Query(ctx, Session{}, `select c.relname,a.*,pg_catalog.pg_get_expr(ad.adbin, ad.adrelid, true) as def_value,dsc.description,dep.objid
		from pg_catalog.pg_attribute a
		inner join pg_catalog.pg_class c on (a.attrelid=c.oid)
		left outer join pg_catalog.pg_attrdef ad on (a.attrelid=ad.adrelid and a.attnum = ad.adnum)
		left outer join pg_catalog.pg_description dsc on (c.oid=dsc.objoid and a.attnum = dsc.objsubid)
		left outer join pg_depend dep on dep.refobjid = a.attrelid AND dep.deptype = 'i' and dep.refobjsubid = a.attnum and dep.classid = dep.refclassid
		where NOT a.attisdropped and c.relkind not in ('i','I','c') and c.oid=$1
		order by a.attnum`, []*string{&oid})
	if err != nil || len(res.Rows) != 4 {
		t.Fatalf("columns: %v, %+v", err, res)
	}
	if got := rowsText(&Result{Columns: res.Columns[:3], Rows: [][]Value{res.Rows[2][:3]}}); got != "people|16384|sex" {
		t.Errorf("third column row starts %q", got)
	}
}

// TestQueryDescribedKeepsDescribedTypes: with an argument that makes rows
// exist, an expression column computed from no rows at Describe (text) is
// still text in the answer, in PostgreSQL's text form of its values.
func TestQueryDescribedKeepsDescribedTypes(t *testing.T) {
	c := openTest(t)
	sql := "SELECT array_agg(attname), count(*) + 0.5, max(attnotnull) FROM pg_attribute WHERE attrelid = $1::regclass GROUP BY attrelid"
	name := "people"
	plain, err := c.Query(context.Background(), Session{}, sql, []*string{&name})
	if err != nil {
		t.Fatal(err)
	}
	if got := []WireType{plain.Columns[0].Type, plain.Columns[1].Type}; got[0] != WireTextArray || got[1] != WireFloat8 {
		t.Fatalf("undescribed types %v", got)
	}
	res, err := c.QueryDescribed(context.Background(), Session{}, sql, []*string{&name})
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsText(res); got != "{id,age,sex,income}|4.5|0" {
		t.Errorf("described answer %q", got)
	}
	for i, col := range res.Columns {
		if col.Type != WireText {
			t.Errorf("column %d is %v, want text as described", i, col.Type)
		}
	}
}

// TestColumnNames: unaliased columns are named as PostgreSQL 15 names them
// (TestPostgresCatalogDifferential in proxy/pgwire checks the same against
// a real server), comparisons are boolean, and a regclass is shown by name.
func TestColumnNames(t *testing.T) {
	c := openTest(t)
	tests := []struct{ sql, names, types, row string }{
		{`SELECT c.oid::pg_catalog.regclass, c.relname, 1, true, pg_catalog.format_type(20, NULL) FROM pg_class c`,
			"oid|relname|?column?|?column?|format_type", "0|0|1|3|0", "people|people|1|true|bigint"},
		{`SELECT c.relkind = 'r', CASE WHEN true THEN c.relname END, (SELECT n.nspname FROM pg_namespace n WHERE n.oid = c.relnamespace) FROM pg_class c`,
			"?column?|case|nspname", "3|0|0", "true|people|public"},
		{`SELECT substring(relname for 2), relname::text, 1::int, '1'::double precision, relname n, relname AS "N", CAST(relpages AS bigint) FROM pg_class`,
			"substring|relname|int4|float8|n|N|relpages", "0|0|1|2|0|0|1", "pe|people|1|1|people|people|0"},
		{`SELECT *, relkind = 'r' FROM pg_namespace, (SELECT relkind FROM pg_class) k WHERE nspname = 'public'`,
			"oid|nspname|nspowner|nspacl|relkind|?column?", "1|0|1|100|0|1", "2200|public|6171|NULL|r|1"},
	}
	for _, tc := range tests {
		res, err := c.Query(context.Background(), Session{}, tc.sql, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		var names, types []string
		for _, col := range res.Columns {
			names = append(names, col.Name)
			types = append(types, fmt.Sprint(int(col.Type)))
		}
		if got := strings.Join(names, "|"); got != tc.names {
			t.Errorf("%s: columns %s, want %s", tc.sql, got, tc.names)
		}
		if got := strings.Join(types, "|"); got != tc.types {
			t.Errorf("%s: types %s, want %s", tc.sql, got, tc.types)
		}
		if got := rowsText(res); got != tc.row {
			t.Errorf("%s: row %s, want %s", tc.sql, got, tc.row)
		}
	}
}

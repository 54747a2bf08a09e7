package pgwire

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"countwall/internal/pgtest"
)

// The catalog differential test: the catalog statements pgcli 3.5 (with
// pgspecial) and psql 15 send by themselves, as captured from PostgreSQL
// 15's log_statement, go to countwall and to a real PostgreSQL holding a
// people table of the same columns; each must answer with the same column
// names and the same rows in text form. The oid of people differs between
// the two and is written {people} in a statement and compared as a name in
// the answers.

// peopleDDL is the test server's people table as PostgreSQL would hold it.
const peopleDDL = `CREATE TABLE people (id bigint, age bigint, sex text, suburb text, zip bigint, income bigint,
	education text, marital text, occupation text, hours bigint, secret bigint)`

// catalogCase is one statement, its text arguments (sent with the extended
// protocol as psycopg does; without arguments, a simple Query), and what of
// the answers is compared.
type catalogCase struct {
	name string
	sql  string
	args []string
	// publicOnly compares only the rows whose first column is "public":
	// a listing over every schema, where PostgreSQL also lists its own
	// tables, views, functions and toast schema, which the catalog does
	// not model.
	publicOnly bool
	// cells, when set, are the only columns compared by value (the others
	// by name): a role's attributes differ by design (countwall's owner is
	// no superuser).
	cells []int
}

var catalogCases = []catalogCase{
	{name: "pgcli search path", sql: `SELECT * FROM unnest(current_schemas(true))`},
	{name: "pgcli schemata", sql: `SELECT nspname FROM pg_catalog.pg_namespace ORDER BY 1`, publicOnly: true},
	{name: "pgcli tables", sql: pgcliRelations, args: []string{"{r,p,f}"}, publicOnly: true},
	{name: "pgcli views", sql: pgcliRelations, args: []string{"{v,m}"}, publicOnly: true},
	{name: "pgcli table columns", sql: pgcliColumns, args: []string{"{r,p,f}"}, publicOnly: true},
	{name: "pgcli view columns", sql: pgcliColumns, args: []string{"{v,m}"}, publicOnly: true},
	{name: "pgcli foreign keys", sql: pgcliForeignKeys},
	{name: "pgcli datatypes", sql: pgcliDatatypes},
	{name: "pgcli functions", sql: pgcliFunctions, publicOnly: true},
	{name: `pgspecial \dt`, sql: pgspecialTables, args: []string{`{r,p,""}`}},
	{name: `pgspecial \d people: lookup`, sql: `SELECT c.oid, n.nspname, c.relname
		FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE pg_catalog.pg_table_is_visible(c.oid) AND c.relname OPERATOR(pg_catalog.~) $1 ORDER BY 2,3`, args: []string{"^(people)$"}},
	{name: `pgspecial \d people: table`, sql: `SELECT c.relchecks, c.relkind, c.relhasindex, c.relhasrules, c.relhastriggers,
		false as relhasoids, '', c.reltablespace,
		CASE WHEN c.reloftype = 0 THEN '' ELSE c.reloftype::pg_catalog.regtype::pg_catalog.text END,
		c.relpersistence, c.relispartition
		FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_class tc ON (c.reltoastrelid = tc.oid) WHERE c.oid = '{people}'`},
	{name: `pgspecial \d people: columns`, sql: `SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
		(SELECT substring(pg_catalog.pg_get_expr(d.adbin, d.adrelid, true) for 128) FROM pg_catalog.pg_attrdef d
		 WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef), a.attnotnull,
		(SELECT c.collname FROM pg_catalog.pg_collation c, pg_catalog.pg_type t
		 WHERE c.oid = a.attcollation AND t.oid = a.atttypid AND a.attcollation <> t.typcollation) AS attcollation,
		a.attidentity, a.attgenerated, NULL AS indexdef, NULL AS attfdwoptions
		FROM pg_catalog.pg_attribute a WHERE a.attrelid = '{people}' AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum;`},
	{name: `pgspecial \d people: indexes`, sql: `SELECT c2.relname, i.indisprimary, i.indisunique, i.indisclustered, i.indisvalid,
		pg_catalog.pg_get_indexdef(i.indexrelid, 0, true), pg_catalog.pg_get_constraintdef(con.oid, true), contype,
		condeferrable, condeferred, c2.reltablespace
		FROM pg_catalog.pg_class c, pg_catalog.pg_class c2, pg_catalog.pg_index i
		LEFT JOIN pg_catalog.pg_constraint con ON conrelid = i.indrelid AND conindid = i.indexrelid AND contype IN ('p','u','x')
		WHERE c.oid = '{people}' AND c.oid = i.indrelid AND i.indexrelid = c2.oid
		ORDER BY i.indisprimary DESC, i.indisunique DESC, c2.relname;`},
	{name: `pgspecial \d people: parents`, sql: `SELECT c.oid::pg_catalog.regclass FROM pg_catalog.pg_class c, pg_catalog.pg_inherits i
		WHERE c.oid = i.inhparent AND i.inhrelid = '{people}' ORDER BY inhseqno`},
	{name: `pgspecial \d people: children`, sql: `SELECT c.oid::pg_catalog.regclass FROM pg_catalog.pg_class c, pg_catalog.pg_inherits i
		WHERE c.oid = i.inhrelid AND i.inhparent = '{people}' ORDER BY c.oid::pg_catalog.regclass::pg_catalog.text;`},
	{name: `pgspecial \dn`, sql: `SELECT n.nspname AS "Name", pg_catalog.pg_get_userbyid(n.nspowner) AS "Owner"
		FROM pg_catalog.pg_namespace n WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' ORDER BY 1`, cells: []int{0}},
	{name: "column names", sql: `SELECT c.oid::pg_catalog.regclass, c.relname, 1, 'x', true, false AS f, NULL,
		pg_catalog.format_type(20, NULL), coalesce(c.relname, 'x'), CASE WHEN c.relkind = 'r' THEN 'table' END,
		CASE WHEN true THEN c.relname ELSE c.relname END, (SELECT n.nspname FROM pg_catalog.pg_namespace n WHERE n.oid = c.relnamespace),
		substring(c.relname for 2), c.relname::text, 1::int, 'a'::varchar(3), '1'::double precision, c.relkind = 'r',
		NOT c.relhasindex, c.relnatts > 3 AND true, (c.relname), c.relname n, "c".relname AS "N", current_user = current_user,
		EXISTS (SELECT 1), CAST(c.relpages AS bigint), CAST(1 AS text), c.relnatts + 1, pg_catalog.lower(c.relname)
		FROM pg_catalog.pg_class c WHERE c.relname = 'people'`},
	{name: `psql \du`, sql: psqlRoles, cells: []int{0, 8}},
	{name: `pgspecial \du`, sql: pgspecialRoles, cells: []int{0, 8}},
}

const pgcliRelations = `SELECT n.nspname schema_name, c.relname table_name
	FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
	WHERE c.relkind = ANY($1) ORDER BY 1,2;`

const pgcliColumns = `SELECT nsp.nspname schema_name, cls.relname table_name, att.attname column_name,
	att.atttypid::regtype::text type_name, att.atthasdef AS has_default,
	pg_catalog.pg_get_expr(def.adbin, def.adrelid, true) as default
	FROM pg_catalog.pg_attribute att
	INNER JOIN pg_catalog.pg_class cls ON att.attrelid = cls.oid
	INNER JOIN pg_catalog.pg_namespace nsp ON cls.relnamespace = nsp.oid
	LEFT OUTER JOIN pg_attrdef def ON def.adrelid = att.attrelid AND def.adnum = att.attnum
	WHERE cls.relkind = ANY($1) AND NOT att.attisdropped AND att.attnum > 0
	ORDER BY 1, 2, att.attnum`

const pgcliForeignKeys = `SELECT s_p.nspname AS parentschema, t_p.relname AS parenttable,
	unnest(( select array_agg(attname ORDER BY i) from
		(select unnest(confkey) as attnum, generate_subscripts(confkey, 1) as i) x
		JOIN pg_catalog.pg_attribute c USING(attnum) WHERE c.attrelid = fk.confrelid )) AS parentcolumn,
	s_c.nspname AS childschema, t_c.relname AS childtable,
	unnest(( select array_agg(attname ORDER BY i) from
		(select unnest(conkey) as attnum, generate_subscripts(conkey, 1) as i) x
		JOIN pg_catalog.pg_attribute c USING(attnum) WHERE c.attrelid = fk.conrelid )) AS childcolumn
	FROM pg_catalog.pg_constraint fk
	JOIN pg_catalog.pg_class t_p ON t_p.oid = fk.confrelid
	JOIN pg_catalog.pg_namespace s_p ON s_p.oid = t_p.relnamespace
	JOIN pg_catalog.pg_class t_c ON t_c.oid = fk.conrelid
	JOIN pg_catalog.pg_namespace s_c ON s_c.oid = t_c.relnamespace
	WHERE fk.contype = 'f';`

const pgcliDatatypes = `SELECT n.nspname schema_name, t.typname type_name
	FROM pg_catalog.pg_type t INNER JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
	WHERE ( t.typrelid = 0 -- non-composite types
		OR ( -- composite type, but not a table
			SELECT c.relkind = 'c' FROM pg_catalog.pg_class c WHERE c.oid = t.typrelid ) )
	AND NOT EXISTS( -- ignore array types
		SELECT 1 FROM pg_catalog.pg_type el WHERE el.oid = t.typelem AND el.typarray = t.oid )
	AND n.nspname <> 'pg_catalog' AND n.nspname <> 'information_schema'
	ORDER BY 1, 2;`

const pgcliFunctions = `SELECT n.nspname schema_name, p.proname func_name, p.proargnames,
	COALESCE(proallargtypes::regtype[], proargtypes::regtype[])::text[], p.proargmodes,
	prorettype::regtype::text return_type, p.prokind = 'a' is_aggregate, p.prokind = 'w' is_window,
	p.proretset is_set_returning, d.deptype = 'e' is_extension, pg_get_expr(proargdefaults, 0) AS arg_defaults
	FROM pg_catalog.pg_proc p INNER JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
	LEFT JOIN pg_depend d ON d.objid = p.oid and d.deptype = 'e'
	WHERE p.prorettype::regtype != 'trigger'::regtype
	ORDER BY 1, 2`

const pgspecialTables = `SELECT n.nspname as "Schema", c.relname as "Name",
	CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'p' THEN 'partitioned table'
		WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 's' THEN 'special'
		WHEN 'f' THEN 'foreign table' END as "Type",
	pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
	FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
	WHERE c.relkind = ANY($1) AND n.nspname <> 'pg_catalog' AND n.nspname <> 'information_schema'
	AND n.nspname !~ '^pg_toast' AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 1, 2`

const psqlRoles = `SELECT r.rolname, r.rolsuper, r.rolinherit, r.rolcreaterole, r.rolcreatedb, r.rolcanlogin,
	r.rolconnlimit, r.rolvaliduntil,
	ARRAY(SELECT b.rolname FROM pg_catalog.pg_auth_members m JOIN pg_catalog.pg_roles b ON (m.roleid = b.oid)
		WHERE m.member = r.oid) as memberof
	, r.rolreplication
	, r.rolbypassrls
	FROM pg_catalog.pg_roles r
	WHERE r.rolname !~ '^pg_'
	ORDER BY 1;`

const pgspecialRoles = `SELECT r.rolname, r.rolsuper, r.rolinherit, r.rolcreaterole, r.rolcreatedb, r.rolcanlogin,
	r.rolconnlimit, r.rolvaliduntil,
	ARRAY(SELECT b.rolname FROM pg_catalog.pg_auth_members m JOIN pg_catalog.pg_roles b ON (m.roleid = b.oid)
		WHERE m.member = r.oid) as memberof,
	r.rolreplication
	FROM pg_catalog.pg_roles r WHERE r.rolname !~ '^pg_' ORDER BY 1`

// catalogAnswer is an answer in text form: column names, rows, or the
// error's SQLSTATE and message.
type catalogAnswer struct {
	columns []string
	rows    [][]string
	err     string
}

func catalogExec(ctx context.Context, conn *pgconn.PgConn, sql string, args []string) catalogAnswer {
	var rr *pgconn.ResultReader
	if len(args) == 0 {
		mrr := conn.Exec(ctx, sql)
		defer mrr.Close()
		if !mrr.NextResult() {
			return catalogAnswer{err: fmt.Sprint(mrr.Close())}
		}
		rr = mrr.ResultReader()
	} else {
		values := make([][]byte, len(args))
		for i, a := range args {
			values[i] = []byte(a)
		}
		rr = conn.ExecParams(ctx, sql, values, nil, nil, nil)
	}
	// The column names are read from the reader, not from a Result, which
	// has them only when a row came.
	var a catalogAnswer
	for rr.NextRow() {
		row := rr.Values()
		cells := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				cells[i] = "NULL"
			} else {
				cells[i] = string(v)
			}
		}
		a.rows = append(a.rows, cells)
	}
	for _, f := range rr.FieldDescriptions() {
		a.columns = append(a.columns, f.Name)
	}
	if _, err := rr.Close(); err != nil {
		return catalogAnswer{err: err.Error()}
	}
	return a
}

// compared is the answer as the case compares it: public rows only, the
// chosen cells, the oid of people by name.
func (c catalogCase) compared(a catalogAnswer, peopleOID string) string {
	if a.err != "" {
		return "error: " + a.err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "columns %s\n", strings.Join(a.columns, "|"))
	for _, r := range a.rows {
		if c.publicOnly && (len(r) == 0 || r[0] != "public") {
			continue
		}
		cells := r
		if c.cells != nil {
			cells = nil
			for _, i := range c.cells {
				cells = append(cells, r[i])
			}
		}
		for i, v := range cells {
			if v == peopleOID {
				cells[i] = "{people}"
			}
		}
		fmt.Fprintf(&b, "%s\n", strings.Join(cells, "|"))
	}
	return b.String()
}

func TestPostgresCatalogDifferential(t *testing.T) {
	srv := pgtest.Server(t)
	ctx := context.Background()
	url := srv.NewDatabase(t)
	if err := pgtest.ExecURL(url, peopleDDL); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "exact", nil, nil)
	mine, err := pgconn.Connect(ctx, ts.dsn(testAnalyst, testPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close(ctx)
	theirs, err := pgconn.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close(ctx)
	oid := func(conn *pgconn.PgConn) string {
		a := catalogExec(ctx, conn, `SELECT 'people'::regclass::oid`, nil)
		if a.err != "" || len(a.rows) != 1 {
			t.Fatalf("the oid of people: %+v", a)
		}
		return a.rows[0][0]
	}
	myOID, theirOID := oid(mine), oid(theirs)
	for _, c := range catalogCases {
		t.Run(c.name, func(t *testing.T) {
			got := c.compared(catalogExec(ctx, mine, strings.ReplaceAll(c.sql, "{people}", myOID), c.args), myOID)
			want := c.compared(catalogExec(ctx, theirs, strings.ReplaceAll(c.sql, "{people}", theirOID), c.args), theirOID)
			if got != want {
				t.Errorf("countwall answered\n%s\nPostgreSQL 15 answered\n%s", got, want)
			}
		})
	}
}

// TestPostgresShowAllDifferential: SHOW ALL lists the settings countwall
// has under PostgreSQL 15's names, descriptions and order (its own
// settings, epsilon, delta and countwall.confidence, besides), and SHOW of
// one names its column as PostgreSQL does.
func TestPostgresShowAllDifferential(t *testing.T) {
	srv := pgtest.Server(t)
	ctx := context.Background()
	ts := startServer(t, "exact", nil, nil)
	mine, err := pgconn.Connect(ctx, ts.dsn(testAnalyst, testPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close(ctx)
	theirs, err := pgconn.Connect(ctx, srv.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close(ctx)
	got, want := catalogExec(ctx, mine, "SHOW ALL", nil), catalogExec(ctx, theirs, "SHOW ALL", nil)
	if got.err != "" || want.err != "" {
		t.Fatalf("SHOW ALL: countwall %q, PostgreSQL %q", got.err, want.err)
	}
	if strings.Join(got.columns, "|") != strings.Join(want.columns, "|") {
		t.Errorf("SHOW ALL columns %v, PostgreSQL's %v", got.columns, want.columns)
	}
	position, description := map[string]int{}, map[string]string{}
	for i, r := range want.rows {
		position[r[0]], description[r[0]] = i, r[2]
	}
	own := map[string]bool{"epsilon": true, "delta": true, "countwall.confidence": true}
	last, seen := -1, 0
	for _, r := range got.rows {
		if own[r[0]] {
			seen++
			continue
		}
		i, ok := position[r[0]]
		if !ok {
			t.Errorf("SHOW ALL lists %q, which PostgreSQL 15 does not have", r[0])
			continue
		}
		if i < last {
			t.Errorf("SHOW ALL lists %q out of PostgreSQL's order", r[0])
		}
		last = i
		if r[2] != description[r[0]] {
			t.Errorf("SHOW ALL describes %s as %q, PostgreSQL as %q", r[0], r[2], description[r[0]])
		}
	}
	if seen != len(own) || len(got.rows) < 20 {
		t.Errorf("SHOW ALL gave %d rows, %d of countwall's own settings", len(got.rows), seen)
	}
	for _, sql := range []string{"SHOW datestyle", "SHOW TimeZone", "SHOW client_encoding"} {
		a, b := catalogExec(ctx, mine, sql, nil), catalogExec(ctx, theirs, sql, nil)
		if strings.Join(a.columns, "|") != strings.Join(b.columns, "|") {
			t.Errorf("%s: column %v, PostgreSQL's %v", sql, a.columns, b.columns)
		}
	}
}

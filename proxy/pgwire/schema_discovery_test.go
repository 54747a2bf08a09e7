package pgwire

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// psqlOutput runs the real psql binary against a test firewall.
func psqlOutput(t *testing.T, ts *testServer, command string) (string, error) {
	t.Helper()
	psql, err := exec.LookPath("psql")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("psql is not installed; .ci/run installs postgresql-client")
		}
		t.Skip("psql is not installed (apt-get install postgresql-client)")
	}
	host, port, _ := net.SplitHostPort(ts.addr)
	cmd := exec.Command(psql, "-X", "-h", host, "-p", port, "-U", testAnalyst, "-d", "countwall", "-c", command)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword, "PGCONNECT_TIMEOUT=5")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestPsqlSchemaDiscovery: psql's \dt, \d, \d people, \dn and \l list what
// the config makes public, answered from the catalog (the exact output of
// psql 15 against PostgreSQL, with countwall's owner and types).
func TestPsqlSchemaDiscovery(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	tests := []struct {
		command string
		want    string
	}{
		{`\dt`, `
          List of relations
 Schema |  Name  | Type  |   Owner   
--------+--------+-------+-----------
 public | people | table | countwall
(1 row)
`},
		{`\d people`, `
                Table "public.people"
   Column   |  Type  | Collation | Nullable | Default 
------------+--------+-----------+----------+---------
 id         | bigint |           |          | 
 age        | bigint |           |          | 
 sex        | text   |           |          | 
 suburb     | text   |           |          | 
 zip        | bigint |           |          | 
 income     | bigint |           |          | 
 education  | text   |           |          | 
 marital    | text   |           |          | 
 occupation | text   |           |          | 
 hours      | bigint |           |          | 
 secret     | bigint |           |          | 

`},
		{`\dn`, `
  List of schemas
  Name  |   Owner   
--------+-----------
 public | countwall
(1 row)
`},
	}
	for _, tc := range tests {
		out, err := psqlOutput(t, ts, tc.command)
		if err != nil {
			t.Errorf("psql -c %q: %v\n%s", tc.command, err, out)
			continue
		}
		if !strings.Contains(out, strings.TrimPrefix(tc.want, "\n")) {
			t.Errorf("psql -c %q printed\n%s\nwant it to contain\n%s", tc.command, out, tc.want)
		}
	}
	out, err := psqlOutput(t, ts, `\d+ people`)
	if err != nil || !strings.Contains(out, "privacy unit") || !strings.Contains(out, "public domain: F, M") || !strings.Contains(out, "public domain: 0 to 100") {
		t.Errorf("psql \\d+ people does not show the unit and the domains as descriptions: %v\n%s", err, out)
	}
	out, err = psqlOutput(t, ts, `\l`)
	if err != nil || !strings.Contains(out, " countwall | countwall | UTF8") {
		t.Errorf("psql \\l: %v\n%s", err, out)
	}
}

// sqlalchemyScript discovers the schema as a Python analyst's tools do:
// SQLAlchemy's inspector over psycopg2, then pandas reading a COUNT.
const sqlalchemyScript = `
import sys
from sqlalchemy import create_engine, inspect, text
host, port, user, password = sys.argv[1:5]
e = create_engine("postgresql+psycopg2://%s:%s@%s:%s/countwall" % (user, password, host, port))
i = inspect(e)
print("tables:", i.get_table_names())
print("has people:", i.has_table("people"), "has nobody:", i.has_table("nobody"))
for c in i.get_columns("people"):
    print("column:", c["name"], c["type"], c["nullable"], c.get("comment"))
print("pk:", i.get_pk_constraint("people")["constrained_columns"])
print("fks:", i.get_foreign_keys("people"), "indexes:", i.get_indexes("people"))
try:
    import pandas
except ImportError:
    print("pandas: absent")
    sys.exit(0)
with e.connect() as conn:
    df = pandas.read_sql(text("SELECT COUNT(*) AS n FROM people WHERE sex = 'F'"), conn)
print("pandas:", list(df.columns), len(df), int(df["n"][0]) > 0)
`

// TestSQLAlchemySchemaDiscovery: SQLAlchemy's inspector lists the table and
// its columns with their types, nullability and comments (unit, domains),
// finds no keys or indexes, and pandas reads a COUNT through the same
// engine. It needs Debian's python3-sqlalchemy and python3-pandas (.ci/run
// installs them).
func TestSQLAlchemySchemaDiscovery(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: starts Python with SQLAlchemy and pandas: skipped under -short; go test ./... runs it")
	}
	for _, module := range []string{"sqlalchemy", "pandas"} {
		if err := exec.Command("/usr/bin/python3", "-c", "import "+module).Run(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing in CI: .ci/run installs python3-%s", module, module)
			}
			t.Skipf("%s is not installed (apt-get install python3-%s)", module, module)
		}
	}
	ts := startServer(t, "exact", nil, nil)
	host, port, _ := net.SplitHostPort(ts.addr)
	out, err := exec.Command("/usr/bin/python3", "-c", sqlalchemyScript, host, port, testAnalyst, testPassword).CombinedOutput()
	if err != nil {
		t.Fatalf("sqlalchemy: %v\n%s", err, out)
	}
	want := `tables: ['people']
has people: True has nobody: False
column: id BIGINT True privacy unit
column: age BIGINT True public domain: 0 to 100
column: sex TEXT True public domain: F, M
`
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("sqlalchemy printed\n%s\nwant it to start with\n%s", out, want)
	}
	for _, line := range []string{"pk: []\n", "fks: [] indexes: []\n", "pandas: ['n'] 1 True\n"} {
		if !strings.Contains(string(out), line) {
			t.Errorf("sqlalchemy output lacks %q:\n%s", line, out)
		}
	}
}

// TestPgxSchemaDiscovery: pgx's LoadType resolves a type name through
// regtype and reads it from pg_type; a JDBC-style column listing (the query
// DBeaver and Metabase send through DatabaseMetaData.getColumns) answers
// with the columns in order, in both protocols.
func TestPgxSchemaDiscovery(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			ctx := context.Background()
			for _, name := range []string{"_int8", "_text", "people"} {
				typ, err := conn.LoadType(ctx, name)
				if err != nil {
					t.Errorf("LoadType(%s): %v", name, err)
					continue
				}
				conn.TypeMap().RegisterType(typ)
			}
			rows, err := conn.Query(ctx, jdbcColumns)
			if err != nil {
				t.Fatal(err)
			}
			names, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
				var schema, table, column, typ string
				var notNull bool
				var position int64
				err := r.Scan(&schema, &table, &column, &typ, &notNull, &position)
				return strings.Join([]string{schema, table, column, typ}, "."), err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(names) < 3 || names[0] != "public.people.id.int8" || names[2] != "public.people.sex.text" {
				t.Errorf("getColumns-style listing = %v", names)
			}
			// Arrays arrive as PostgreSQL arrays (text[] and int8[]), in
			// text or binary format as the client asks.
			var cols []string
			var types []int64
			err = conn.QueryRow(ctx, `SELECT array_agg(attname ORDER BY attnum), array_agg(atttypid ORDER BY attnum)
				FROM pg_catalog.pg_attribute WHERE attrelid = 'people'::regclass AND attnum <= 3`).Scan(&cols, &types)
			if err != nil || strings.Join(cols, ",") != "id,age,sex" || fmt.Sprint(types) != "[20 20 25]" {
				t.Errorf("array_agg of the columns = %v %v, %v", cols, types, err)
			}
		})
	}
}

// jdbcColumns is the heart of pgjdbc 42.5's getColumns query.
const jdbcColumns = `SELECT * FROM (SELECT n.nspname, c.relname, a.attname, t.typname, a.attnotnull OR (t.typtype = 'd' AND t.typnotnull) AS attnotnull,
 row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum) AS attnum
 FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_class c ON (c.relnamespace = n.oid)
 JOIN pg_catalog.pg_attribute a ON (a.attrelid=c.oid) JOIN pg_catalog.pg_type t ON (a.atttypid = t.oid)
 LEFT JOIN pg_catalog.pg_attrdef def ON (a.attrelid=def.adrelid AND a.attnum = def.adnum)
 LEFT JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid)
 WHERE c.relkind in ('r','p','v','f','m') and a.attnum > 0 AND NOT a.attisdropped AND n.nspname LIKE 'public' AND c.relname LIKE 'people') c
 WHERE true AND attname LIKE '%' ORDER BY nspname,c.relname,attnum`

// psycopg3Script binds a parameter server-side and reads a type and a row
// type as psycopg 3's TypeInfo and CompositeInfo do (to_regtype, regtype
// casts, the field names and types as arrays from array_agg).
const psycopg3Script = `
import sys, psycopg
from psycopg.types import TypeInfo
from psycopg.types.composite import CompositeInfo
host, port, user, password = sys.argv[1:5]
conn = psycopg.connect(host=host, port=port, user=user, password=password, dbname="countwall", autocommit=True)
print("count:", conn.execute("SELECT COUNT(*) FROM people WHERE age > %s", (200,)).fetchone()[0])
t = TypeInfo.fetch(conn, "int8")
print("type:", t.name, t.oid, t.array_oid)
c = CompositeInfo.fetch(conn, "people")
print("row:", c.name, c.oid, type(c.field_names).__name__, c.field_names[:12], c.field_types[:9])
`

// TestPsycopg3SchemaDiscovery runs psycopg 3 (Debian's python3-psycopg,
// which .ci/run installs) against the firewall.
func TestPsycopg3SchemaDiscovery(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import psycopg").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("psycopg 3 is missing in CI: .ci/run installs python3-psycopg")
		}
		t.Skip("psycopg 3 is not installed (apt-get install python3-psycopg)")
	}
	ts := startServer(t, "exact", nil, nil)
	host, port, _ := net.SplitHostPort(ts.addr)
	out, err := exec.Command("/usr/bin/python3", "-c", psycopg3Script, host, port, testAnalyst, testPassword).CombinedOutput()
	if err != nil {
		t.Fatalf("psycopg 3: %v\n%s", err, out)
	}
	// CompositeInfo's field lists are arrays only over the simple protocol
	// (see docs/analyst.md); psycopg 3 binds server-side, and the described type
	// of a column computed from no rows is text, so they arrive as the
	// arrays' text form.
	want := "count: 0\ntype: int8 20 1016\nrow: people 16385 str {id,age,sex, {20,20,25\n"
	if string(out) != want {
		t.Errorf("psycopg 3 printed\n%s\nwant\n%s", out, want)
	}
}

package pgwire

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The matrix's clients that run as programs, from testdata/clients: psql,
// psycopg2, SQLAlchemy with pandas, node-postgres, postgres.js and
// pgjdbc. Each is given host, port, user and password as arguments.

const clientScripts = "testdata/clients"

func scriptClients() []matrixClient {
	return []matrixClient{
		{name: "psql", types: pgTypeNames, values: "bigint bigint", run: psqlReport},
		{name: "psycopg2", types: pgTypeNames, values: "int int", run: pythonClient("psycopg2_client.py", "psycopg2")},
		{name: "sqlalchemy+pandas", types: driverTypes{"BIGINT", "TEXT", "DOUBLE_PRECISION"}, values: "int64 int64",
			run: pythonClient("sqlalchemy_pandas.py", "sqlalchemy", "pandas", "psycopg2")},
		// node-postgres and postgres.js read a bigint as a string, from
		// PostgreSQL too (it may not fit a JavaScript number).
		{name: "node-postgres", types: pgTypeNames, values: "string string", run: nodeClient("node_pg.js")},
		{name: "postgres.js", types: pgTypeNames, values: "string string", run: nodeClient("postgresjs.js")},
		{name: "pgjdbc", types: driverTypes{"int8", "text", "float8"}, values: "Long Long", run: jdbcReport},
	}
}

// clientArgs are the arguments every client program takes.
func clientArgs(ts *testServer) []string {
	host, port, _ := net.SplitHostPort(ts.addr)
	return []string{host, port, testAnalyst, testPassword}
}

func pythonClient(script string, modules ...string) func(*testing.T, *testServer) string {
	return func(t *testing.T, ts *testServer) string {
		for _, m := range modules {
			err := exec.Command("/usr/bin/python3", "-c", "import "+m).Run()
			needClient(t, err, "Python's "+m, "apt-get install python3-"+m)
		}
		return runClient(t, exec.Command("/usr/bin/python3", append([]string{filepath.Join(clientScripts, script)}, clientArgs(ts)...)...))
	}
}

// nodeModules is where npm ci installed testdata/clients/package-lock.json:
// $COUNTWALL_NODE_MODULES, else countwall-clients/node_modules in the
// user's cache folder.
func nodeModules() string {
	if dir := os.Getenv("COUNTWALL_NODE_MODULES"); dir != "" {
		return dir
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "countwall-clients", "node_modules")
}

func nodeClient(script string) func(*testing.T, *testServer) string {
	return func(t *testing.T, ts *testServer) string {
		node, err := exec.LookPath("node")
		needClient(t, err, "node", "apt-get install nodejs npm")
		modules := nodeModules()
		for _, pkg := range []string{"pg", "pg-cursor", "pg-copy-streams", "postgres"} {
			_, err := os.Stat(filepath.Join(modules, pkg, "package.json"))
			needClient(t, err, "the npm package "+pkg, "npm ci --prefix "+filepath.Dir(modules)+" after copying "+clientScripts+"/package*.json there (.ci/run does)")
		}
		cmd := exec.Command(node, append([]string{filepath.Join(clientScripts, script)}, clientArgs(ts)...)...)
		cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
		return runClient(t, cmd)
	}
}

// pgjdbc is Debian's libpostgresql-jdbc-java.
const pgjdbc = "/usr/share/java/postgresql.jar"

var (
	// jdbcClasses is ClientMatrix.java compiled, once per test binary: the
	// JDK is slow to start.
	jdbcOnce    sync.Once
	jdbcClasses string
	jdbcErr     error
)

func jdbcReport(t *testing.T, ts *testServer) string {
	javac, err := exec.LookPath("javac")
	needClient(t, err, "javac", "apt-get install default-jdk-headless")
	_, err = os.Stat(pgjdbc)
	needClient(t, err, "pgjdbc", "apt-get install libpostgresql-jdbc-java")
	jdbcOnce.Do(func() {
		jdbcClasses = filepath.Join(fixtureDir, "jdbc")
		out, err := exec.Command(javac, "-d", jdbcClasses, "-cp", pgjdbc, filepath.Join(clientScripts, "ClientMatrix.java")).CombinedOutput()
		if err != nil {
			jdbcErr = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if jdbcErr != nil {
		t.Fatalf("javac ClientMatrix.java: %v", jdbcErr)
	}
	cp := jdbcClasses + string(os.PathListSeparator) + pgjdbc
	return runClient(t, exec.Command("java", append([]string{"-cp", cp, "ClientMatrix"}, clientArgs(ts)...)...))
}

// psqlReport runs testdata/clients/psql.sql in a fresh folder (where \copy
// writes matrix.csv) and turns what psql printed into the matrix's report.
func psqlReport(t *testing.T, ts *testServer) string {
	psql, err := exec.LookPath("psql")
	needClient(t, err, "psql", "apt-get install postgresql-client")
	script, err := filepath.Abs(filepath.Join(clientScripts, "psql.sql"))
	if err != nil {
		t.Fatal(err)
	}
	args := clientArgs(ts)
	cmd := exec.Command(psql, "-X", "-At", "-h", args[0], "-p", args[1], "-U", testAnalyst, "-d", "countwall",
		"-v", "age=25", "-v", "sex=F", "-v", "score=2.5", "-f", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword, "PGCONNECT_TIMEOUT=5")
	out, err := cmd.Output() // the refusals go to stderr; LAST_ERROR_* echo them
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	copied, err := os.ReadFile(filepath.Join(cmd.Dir, "matrix.csv"))
	if err != nil {
		t.Fatalf("psql's \\copy wrote no file: %v\n%s", err, out)
	}
	var r report
	var schema, chunks, rows, types []string
	section := ""
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		key, value, keyed := strings.Cut(line, ": ")
		fields := strings.Split(line, "|")
		switch {
		case line == "schema:" || line == "rows:" || line == "types:":
			section = line
		case keyed && key == "chunk":
			if value != "0" {
				chunks = append(chunks, value)
			}
		case keyed:
			if section == "schema:" {
				r.line("schema", strings.Join(schema, " "))
			}
			if key == "refused" {
				r.line("chunks", strings.Join(chunks, " "))
				r.line("rows", strings.Join(rows, " "))
				r.line("types", strings.Join(types, " "))
				r.line("copy", strings.ReplaceAll(strings.TrimSuffix(string(copied), "\n"), "\n", "|"))
			}
			section = ""
			r.line(key, value)
		case section == "schema:" && len(fields) == 4: // \dt: schema|name|type|owner
			schema = append(schema, fields[1])
		case section == "schema:" && len(fields) == 5: // \d: column|type|collation|nullable|default
			schema = append(schema, fields[0]+":"+fields[1])
		case section == "rows:" && len(fields) == 2:
			rows = append(rows, fields[0]+"="+fields[1])
		case section == "types:" && len(fields) == 2: // \gdesc: column|type
			types = append(types, fields[1])
		}
	}
	return r.b.String()
}

package cli

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"countwall/config"
)

var passwordLine = regexp.MustCompile(`password of analyst: (\S+)`)

// `load --config-out` writes a whole config from a CSV with no id and a
// column named default: `serve` runs it as written and psql, with the
// password shown once, counts through it, GROUP BY over the domains read
// from the data included. The file keeps the verifier, not the password,
// and marks each domain read from the data for review.
func TestLoadWritesARunnableConfig(t *testing.T) {
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("psql is not installed")
	}
	dir := t.TempDir()
	csv := writeFile(t, dir, "bank.csv", "age,job,balance,default,y\n30,admin,-1,no,yes\n45,tech,2000,yes,no\n50,admin,120,no,no\n")
	db, cfgPath, addr := filepath.Join(dir, "bank.db"), filepath.Join(dir, "bank.yaml"), freePort(t)
	out, err := run(t, "", "load", "--csv", csv, "--db", db, "--table", "bank", "--add-id", "id", "--config-out", cfgPath, "--listen", addr)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	m := passwordLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no password shown:\n%s", out)
	}
	password := m[1]
	body, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"database: bank.db\n", "state: bank-state.db\n", "password: \"SCRAM-SHA-256$4096:",
		"age: {min: 30, max: 50}  # read from the data: REVIEW", `default: ["no", "yes"]  # read from the data: REVIEW`,
		"A domain\n      # read from the data is not public", "  idp: {k: 1, plus_one: false}", "  name: laplace"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the config lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(string(body), password) {
		t.Error("the config holds the password")
	}
	if st, err := os.Stat(cfgPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v (%v), want 0600", st.Mode().Perm(), err)
	}

	logs, stop := startServe(t, "--config", cfgPath)
	defer stop()
	got, err := psqlWhenUp(addr, password, `SELECT "default", COUNT(*) FROM bank GROUP BY "default"`)
	if err != nil {
		t.Fatalf("psql through the written config: %v\n%s\n%s", err, got, logs.String())
	}
	if lines := strings.Split(strings.TrimSpace(got), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "no|") || !strings.HasPrefix(lines[1], "yes|") {
		t.Errorf("GROUP BY \"default\" under laplace: %q, want a row for no and for yes", got)
	}

	// init writes the same from the database alone, and refuses to
	// overwrite a config.
	initOut := filepath.Join(dir, "init.yaml")
	if out, err := run(t, "", "init", "--db", db, "--table", "bank", "--unit", "id", "--out", initOut, "--mechanism", "idp"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	cfg, err := config.Load(initOut, nil)
	if err != nil || cfg.Mechanism.Name != "idp" || !cfg.Tables["bank"].UnitKeyed {
		t.Errorf("init's config: %v, %+v", err, cfg)
	}
	if out, err := run(t, "", "init", "--db", db, "--table", "bank", "--unit", "id", "--out", initOut); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("init over an existing config: %v\n%s", err, out)
	}
}

// `demo --dir demo-run`, a relative path, keeps configs whose database
// paths work from where the demo ran, as `attack report --help` and the
// README use them: a query through one of them counts the demo's people.
func TestDemoKeptInARelativeDir(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	runIn := func(args ...string) string {
		t.Helper()
		out, err := run(t, "", args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	runIn("demo", "--no-attacks", "--rows", "500", "--dir", "demo-run")
	out := runIn("query", "--config", "demo-run/countwall-exact.yaml", "SELECT COUNT(*) FROM people")
	if !strings.Contains(out, "500") {
		t.Errorf("query through the kept config:\n%s", out)
	}
	body, err := os.ReadFile(filepath.Join(cwd, "demo-run", "countwall-exact.yaml"))
	if err != nil || !strings.Contains(string(body), "database: "+filepath.Join(cwd, "demo-run", "demo.db")) {
		t.Errorf("the kept config names its database %v:\n%s", err, body)
	}
}

// In-process `query` is charged to the config's only analyst unless
// --analyst names another the config lists; `budget list` shows her. An
// analyst the config does not name is refused by query, budget grant and
// budget reset alike, with the configured analysts named.
func TestCommandsActForConfiguredAnalysts(t *testing.T) {
	dir := t.TempDir()
	csv := writeFile(t, dir, "t.csv", "id,sex\n1,F\n2,M\n3,F\n")
	db, cfgPath := filepath.Join(dir, "t.db"), filepath.Join(dir, "t.yaml")
	if out, err := run(t, "", "load", "--csv", csv, "--db", db, "--table", "t", "--unit", "id", "--config-out", cfgPath); err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	const unknown = `analyst "mallory" is not in the config; its analysts: analyst`
	tests := []struct {
		args []string
		want string // in the output, or the error when err is set
		err  bool
	}{
		{[]string{"query", "--config", cfgPath, "SELECT COUNT(*) FROM t"}, "charged epsilon 0.1 (dp)", false},
		{[]string{"query", "--config", cfgPath, "--analyst", "analyst", "SELECT COUNT(*) FROM t"}, "charged epsilon 0.1 (dp)", false},
		{[]string{"query", "--config", cfgPath, "--analyst", "mallory", "SELECT COUNT(*) FROM t"}, unknown, true},
		{[]string{"budget", "grant", "mallory", "--epsilon", "1", "--config", cfgPath}, unknown, true},
		{[]string{"budget", "reset", "mallory", "--yes", "--config", cfgPath}, unknown, true},
		{[]string{"budget", "list", "--config", cfgPath}, "analyst  dp    0.2 ", false},
	}
	for _, tt := range tests {
		out, err := run(t, "", tt.args...)
		switch {
		case tt.err && (err == nil || err.Error() != tt.want):
			t.Errorf("%v: %v, want the error %q\n%s", tt.args, err, tt.want, out)
		case !tt.err && (err != nil || !strings.Contains(out, tt.want)):
			t.Errorf("%v: %v, want %q in\n%s", tt.args, err, tt.want, out)
		}
	}
}

// load and init follow one rule for names: a column "Visit Date" is
// accepted by both and printed as the analyst must type it, "visit date"
// in double quotes, which then counts; a dotted name is refused by both
// with the same words.
func TestLoadAndInitNameColumnsAlike(t *testing.T) {
	dir := t.TempDir()
	csv := writeFile(t, dir, "v.csv", "id,Visit Date\n1,mon\n2,tue\n3,mon\n")
	db := filepath.Join(dir, "v.db")
	const note = `in SQL, write "visit date" in double quotes, as here (SELECT COUNT(*) FROM v WHERE "visit date" = ...)`
	out, err := run(t, "", "load", "--csv", csv, "--db", db, "--table", "v", "--unit", "id")
	if err != nil || !strings.Contains(out, "note: "+note) {
		t.Fatalf("load: %v\n%s", err, out)
	}
	cfgPath := filepath.Join(dir, "v.yaml")
	out, err = run(t, "", "init", "--db", db, "--table", "v", "--unit", "id", "--out", cfgPath)
	if err != nil || !strings.Contains(out, "  "+note) {
		t.Fatalf("init: %v\n%s", err, out)
	}
	out, err = run(t, "", "query", "--config", cfgPath, "--mechanism.name", "exact", `SELECT "visit date", COUNT(*) FROM v GROUP BY "visit date"`)
	if err != nil || !strings.Contains(out, " mon        | 2") {
		t.Errorf("query: %v\n%s", err, out)
	}

	const dotted = `column name "a.b" holds a dot, which the config reads as a key separator; rename it (e.g. "a_b")`
	csv = writeFile(t, dir, "d.csv", "id,a.b\n1,2\n")
	if out, err := run(t, "", "load", "--csv", csv, "--db", filepath.Join(dir, "d.db"), "--table", "d", "--unit", "id"); err == nil || !strings.Contains(err.Error(), dotted) {
		t.Errorf("load of a dotted name: %v\n%s", err, out)
	}
	if out, err := run(t, "", "load", "--csv", writeFile(t, dir, "ok.csv", "id,a_b\n1,2\n"), "--db", db, "--table", "d", "--unit", "id"); err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	renameColumn(t, db, "d", "a_b", "a.b")
	if out, err := run(t, "", "init", "--db", db, "--table", "d", "--unit", "id", "--out", filepath.Join(dir, "d.yaml")); err == nil || !strings.Contains(err.Error(), dotted) {
		t.Errorf("init of a dotted name: %v\n%s", err, out)
	}
}

// renameColumn renames a column of a SQLite table, as a database not made
// by load may name it.
func renameColumn(t *testing.T, db, table, from, to string) {
	t.Helper()
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec(`ALTER TABLE "` + table + `" RENAME COLUMN "` + from + `" TO "` + to + `"`); err != nil {
		t.Fatal(err)
	}
}

// On a table of several rows a person, init and load --config-out write a
// max_rows_per_unit read from the data, say so for review, and EXPLAIN
// through the config states the bound in force.
func TestStarterBoundsRowsPerUnit(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("customer,region\n")
	for c := 0; c < 30; c++ {
		for range 1 + c%3 { // 1 to 3 orders a customer: 60 in all
			b.WriteString("c" + strconv.Itoa(c) + ",north\n")
		}
	}
	csv := writeFile(t, dir, "orders.csv", b.String())
	db := filepath.Join(dir, "orders.db")
	const review = "  REVIEW max_rows_per_unit 3, read from the data: 60 rows of 30 units (2.0 a unit on average, at most 3), of which it counts 100.0%;\n"
	for _, args := range [][]string{
		{"load", "--csv", csv, "--db", db, "--table", "orders", "--unit", "customer", "--config-out", filepath.Join(dir, "load.yaml")},
		{"init", "--db", db, "--table", "orders", "--unit", "customer", "--out", filepath.Join(dir, "init.yaml")},
	} {
		out, err := run(t, "", args...)
		if err != nil || !strings.Contains(out, review) {
			t.Fatalf("%s: %v, want %q in\n%s", args[0], err, review, out)
		}
		cfgPath := args[len(args)-1]
		body, err := os.ReadFile(cfgPath)
		if err != nil || !strings.Contains(string(body), "    max_rows_per_unit: 3  # read from the data: REVIEW\n") {
			t.Errorf("%s: the config lacks the bound (%v):\n%s", args[0], err, body)
		}
		out, err = run(t, "", "query", "--config", cfgPath, "EXPLAIN SELECT COUNT(*) FROM orders")
		if want := "Contribution bounds: C = 3 rows of a person per cell (the table's max_rows_per_unit): a person's rows beyond 3 are not counted"; err != nil || !strings.Contains(out, want) {
			t.Errorf("%s: EXPLAIN: %v, want %q in\n%s", args[0], err, want, out)
		}
	}
}

// psql runs sql with psql as the analyst the starter config names, and
// returns its output (unaligned, tuples only) and its stderr (the NOTICEs).
func psql(addr, password, sql string) (out, stderr string, err error) {
	c := exec.Command("psql", "postgres://analyst@"+addr+"/countwall?sslmode=disable", "-X", "-A", "-t", "-c", sql)
	c.Env = append(os.Environ(), "PGPASSWORD="+password)
	var e strings.Builder
	c.Stderr = &e
	b, err := c.Output()
	return string(b), e.String(), err
}

// psqlWhenUp is psql once the server answers, within 20 seconds: the
// output, or the error's stderr.
func psqlWhenUp(addr, password, sql string) (string, error) {
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, stderr, err := psql(addr, password, sql)
		if err == nil {
			return out, nil
		}
		if time.Now().After(deadline) {
			return stderr, err
		}
	}
}

// The owner's first hour, as the docs tell it: a CSV of one's own with a
// header holding a space and several rows a person goes through load
// --config-out, which prints the starter config's limits, the bound read
// from the data and the name to quote; serve runs the config as written
// and psql counts through it, rows and not persons.
func TestOwnDataToAPsqlAnswer(t *testing.T) {
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("psql is not installed")
	}
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("customer,Visit Date,amount\n")
	rows := 0
	for c := 0; c < 400; c++ {
		for v := range 1 + c%5 { // 1 to 5 visits a customer
			fmt.Fprintf(&b, "c%d,2024-01-0%d,%d\n", c, 1+v, 10*(c%7))
			rows++
		}
	}
	csv := writeFile(t, dir, "visits.csv", b.String())
	db, cfgPath, addr := filepath.Join(dir, "visits.db"), filepath.Join(dir, "visits.yaml"), freePort(t)
	out, err := run(t, "", "load", "--csv", csv, "--db", db, "--table", "visits", "--unit", "customer", "--config-out", cfgPath, "--listen", addr)
	if err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	for _, want := range []string{
		"  budget:  each analyst may spend dp epsilon 1 in all (budget.epsilon_cap), 0.1 a query by default: 10 answers",
		"countwall budget grant analyst --kind dp --epsilon 1 --config " + cfgPath,
		"  REVIEW max_rows_per_unit 5, read from the data: 1,200 rows of 400 units",
		`in SQL, write "visit date" in double quotes`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("load's summary lacks %q:\n%s", want, out)
		}
	}
	m := passwordLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no password shown:\n%s", out)
	}
	logs, stop := startServe(t, "--config", cfgPath)
	defer stop()
	got, err := psqlWhenUp(addr, m[1], `SELECT COUNT(*) FROM visits WHERE "visit date" >= '2024-01-01'`)
	if err != nil {
		t.Fatalf("psql: %v\n%s\n%s", err, got, logs.String())
	}
	// 1,200 rows, 400 persons: laplace at C = 5 and epsilon 0.1 (scale 50)
	// answers within 600 of the rows but once in 160,000 (e^-12), and
	// never as close to the persons.
	n, err := strconv.Atoi(strings.TrimSpace(got))
	if err != nil || n < rows-600 || n > rows+600 {
		t.Errorf("COUNT(*) of %d rows answered %q", rows, got)
	}
}

package proxy

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"countwall/config"
	"countwall/mechanisms"
	"countwall/pgerror"
	"countwall/proxy/state/release"
)

// fixture is a small protected database and a config in front of it.
type fixture struct {
	dir      string
	database string
	state    string
}

// newFixture writes a people table of n rows whose values are a fixed
// function of the row number, so expected counts are known exactly.
func newFixture(t testing.TB, n int) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, database: filepath.Join(dir, "protected.db"), state: filepath.Join(dir, "state.db")}
	db, err := sql.Open("sqlite", f.database)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{`CREATE TABLE people (id INTEGER, age INTEGER, sex TEXT, suburb TEXT, income INTEGER)`}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO people VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		sex := "F"
		if i%2 == 0 {
			sex = "M"
		}
		if _, err := ins.Exec(i, 18+i%60, sex, fmt.Sprintf("suburb_%02d", i%7), 1000*(i%50)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return f
}

// config returns a config for the fixture with the given mechanism.
func (f *fixture) config(t testing.TB, mechanism string, params map[string]any) *config.Config {
	t.Helper()
	body := fmt.Sprintf(`
database: %s
state: %s
mechanism:
  name: %s
tables:
  people:
    privacy_unit: id
    domains:
      sex: [F, M]
      age: {min: 18, max: 77}
`, f.database, f.state, mechanism)
	path := filepath.Join(f.dir, "countwall.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Mechanism.Params = params
	return cfg
}

func (f *fixture) open(t testing.TB, mechanism string, params map[string]any) *Engine {
	t.Helper()
	e, err := Open(context.Background(), f.config(t, mechanism, params), Options{NoiseSeed: 1})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// mechanismsUnderTest are all registered mechanisms.
func mechanismsUnderTest() []string { return mechanisms.Names() }

// ageCount is how many of rows 1..n the fixture gives the age a (18 + i%60).
func ageCount(n, a int) int64 {
	var c int64
	for i := 1; i <= n; i++ {
		if 18+i%60 == a {
			c++
		}
	}
	return c
}

func fileSum(t testing.TB, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// counts runs a query and returns its count column as integers.
func counts(t testing.TB, e *Engine, sql string) []int64 {
	t.Helper()
	res, err := e.Query(context.Background(), "alice", sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out := make([]int64, len(res.Rows))
	for i, row := range res.Rows {
		out[i] = row[len(row)-1].Int
	}
	return out
}

func TestExactCountsAndGroups(t *testing.T) {
	f := newFixture(t, 1000)
	e := f.open(t, "exact", nil)
	tests := []struct {
		sql  string
		want []int64
	}{
		{"SELECT COUNT(*) FROM people", []int64{1000}},
		{"select count(1) from PEOPLE where sex = 'F'", []int64{500}},
		{"SELECT COUNT(DISTINCT id) FROM people WHERE age BETWEEN 18 AND 19", []int64{33}},
		{"SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex DESC", []int64{500, 500}},
		{"SELECT COUNT(*) > 999 FROM people", []int64{1}},
		{"SELECT COUNT(*) >= 1001 FROM people", []int64{0}},
	}
	for _, tc := range tests {
		got := counts(t, e, tc.sql)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s = %v, want %v", tc.sql, got, tc.want)
		}
	}
	// A GROUP BY over a declared range answers every cell of the domain.
	res, err := e.Query(context.Background(), "alice", "SELECT age, COUNT(*) AS n FROM people GROUP BY age")
	if err != nil {
		t.Fatal(err)
	}
	// age is an integer column: its groups are bigints, as PostgreSQL's.
	if len(res.Rows) != 60 || res.Columns[1].Name != "n" || res.Columns[1].Type != ColumnInt8 || res.Columns[0].Type != ColumnInt8 {
		t.Fatalf("age histogram: %d rows, columns %+v", len(res.Rows), res.Columns)
	}
	if first := res.Rows[0][0]; first.Int != 18 || first.Text != "18" {
		t.Errorf("age histogram's first group is %+v, want 18", first)
	}
	if res.Tag != "SELECT 60" {
		t.Errorf("tag = %q", res.Tag)
	}
}

func TestCellKeyIsStickyAcrossTextAndRestart(t *testing.T) {
	f := newFixture(t, 2000)
	params := map[string]any{"ptable": "uniform", "d": 2, "suppress_at": 4}
	e := f.open(t, "cellkey", params)
	// Textually different queries over the same contributor set.
	same := []string{
		"SELECT COUNT(*) FROM people WHERE age = 30",
		"select count(*) from people where 30 = age",
		"SELECT COUNT(1) FROM people WHERE age >= 30 AND age <= 30",
		"SELECT COUNT(*) FROM people WHERE age BETWEEN 30 AND 30 AND sex IN ('F', 'M')",
		"SELECT COUNT(*) FROM people WHERE (age = 30 OR age = 30)",
	}
	first := counts(t, e, same[0])[0]
	for _, q := range same[1:] {
		if got := counts(t, e, q)[0]; got != first {
			t.Errorf("%s = %d, want %d (same contributors)", q, got, first)
		}
	}
	var before []int64
	for age := 18; age < 78; age++ {
		before = append(before, counts(t, e, fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age = %d", age))[0])
	}
	e.Close()

	// Restarted on the same state database: the same secret, the same answers.
	e2 := f.open(t, "cellkey", params)
	var noiseSeen bool
	for i, age := 0, 18; age < 78; i, age = i+1, age+1 {
		got := counts(t, e2, fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age = %d", age))[0]
		if got != before[i] {
			t.Errorf("age %d after restart = %d, before = %d", age, got, before[i])
		}
		truth := ageCount(2000, age)
		if d := got - truth; d < -2 || d > 2 {
			t.Errorf("age %d: answer %d is more than D=2 from the truth %d", age, got, truth)
		}
		noiseSeen = noiseSeen || got != truth
	}
	if !noiseSeen {
		t.Error("60 cells all answered exactly: no noise was added")
	}
	e2.Close()

	// A different secret (a fresh state database) gives different noise.
	f.state = filepath.Join(f.dir, "other-state.db")
	e3 := f.open(t, "cellkey", params)
	var differ int
	for i, age := 0, 18; age < 78; i, age = i+1, age+1 {
		if counts(t, e3, fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age = %d", age))[0] != before[i] {
			differ++
		}
	}
	// Each cell's noise is uniform on 5 values, so with an independent secret a
	// cell keeps its answer with probability 1/5; all 60 keeping it has
	// probability 5^-60. Requiring at least 20 of 60 to differ fails with
	// probability below 1e-9 (binomial tail, p=0.8).
	if differ < 20 {
		t.Errorf("only %d of 60 cells changed with a new secret", differ)
	}
}

func TestBoundedNoiseIsFresh(t *testing.T) {
	f := newFixture(t, 500)
	e := f.open(t, "bounded", map[string]any{"range": 3})
	seen := map[int64]bool{}
	for i := 0; i < 100; i++ {
		got := counts(t, e, "SELECT COUNT(*) FROM people WHERE sex = 'F'")[0]
		if got < 247 || got > 253 {
			t.Fatalf("answer %d outside 250±3", got)
		}
		seen[got] = true
	}
	// 100 draws uniform on 7 values all landing on one value: probability 7*7^-100.
	if len(seen) < 2 {
		t.Errorf("100 repeats gave one answer: noise is not fresh")
	}
}

func TestSetShowAndChatter(t *testing.T) {
	f := newFixture(t, 10)
	e := f.open(t, "exact", nil)
	s := e.NewSession("alice")
	ctx := context.Background()
	steps := []struct {
		sql     string
		want    string       // first value of the first row, or the tag
		wantErr pgerror.Code // SQLSTATE
	}{
		{sql: "SET application_name = 'psql'", want: "SET"},
		{sql: "SHOW application_name", want: "psql"},
		{sql: "SET epsilon = 0.2", want: "SET"},
		{sql: "SHOW epsilon", want: "0.2"},
		{sql: "RESET epsilon", want: "RESET"},
		{sql: "SHOW epsilon", want: "0.1"}, // the config's default share
		{sql: "SET epsilon = 0.2", want: "SET"},
		{sql: "RESET ALL", want: "RESET"},
		{sql: "SHOW application_name", want: ""},
		{sql: "SHOW epsilon", want: "0.1"}, // the config's default share
		{sql: "RESET no_such_thing", wantErr: pgerror.UndefinedObject},
		{sql: "RESET", wantErr: pgerror.SyntaxError},
		{sql: "SET application_name = 'psql'", want: "SET"},
		{sql: "SET epsilon = 5", wantErr: pgerror.InvalidParameterValue},
		{sql: "SET epsilon = 'lots'", wantErr: pgerror.InvalidParameterValue},
		{sql: "SET no_such_thing = 1", wantErr: pgerror.UndefinedObject},
		{sql: "SET standard_conforming_strings = off", wantErr: pgerror.FeatureNotSupported},
		{sql: "SET standard_conforming_strings TO 'false'", wantErr: pgerror.FeatureNotSupported},
		{sql: "SHOW standard_conforming_strings", want: "on"},
		{sql: "SET standard_conforming_strings = on", want: "SET"},
		{sql: "SHOW mechanism", want: "exact"},
		{sql: "SHOW server_version_num", want: "150000"},
		{sql: "SELECT current_setting('server_version_num')", want: "150000"},
		{sql: "SELECT version()", want: "PostgreSQL " + ServerVersion},
		{sql: "BEGIN", want: "BEGIN"},
		{sql: "COMMIT", want: "COMMIT"},
		{sql: "SELECT * FROM people", wantErr: pgerror.FeatureNotSupported},
	}
	for _, st := range steps {
		res, err := s.Exec(ctx, st.sql, nil)
		if st.wantErr != "" {
			var pe *pgerror.Error
			if !errors.As(err, &pe) || pe.Code != st.wantErr {
				t.Errorf("%s: error %v, want SQLSTATE %s", st.sql, err, st.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", st.sql, err)
			continue
		}
		got := res.Tag
		if len(res.Rows) > 0 {
			got = res.Rows[0][0].Text
		}
		if got != st.want {
			t.Errorf("%s = %q, want %q", st.sql, got, st.want)
		}
	}
}

// TestAuditLogHoldsWhatWasReleased: an answered query's audit row holds
// its statement (shape and constants) and the cells sent, exactly as the
// client received them; a refusal's row holds no statement, only its
// fingerprint and the refusal, which names no value.
func TestAuditLogHoldsWhatWasReleased(t *testing.T) {
	f := newFixture(t, 50)
	e := f.open(t, "exact", nil)
	ctx := context.Background()
	answered, err := e.Query(ctx, "alice", "SELECT COUNT(*)\n  FROM people -- a comment\n WHERE suburb = 'suburb_03' AND age > 30;")
	if err != nil {
		t.Fatal(err)
	}
	grouped, err := e.Query(ctx, "alice", "select sex, count(*) from people where age >= 18 group by sex")
	if err != nil {
		t.Fatal(err)
	}
	e.Query(ctx, "alice", "SELECT COUNT(*) FROM people WHERE nosuch = 'suburb_04'") //nolint:errcheck // the outcome is read back from the audit log
	e.state.Flush()
	log, err := e.state.AuditLog(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 3 || log[0].Outcome != "answered" || log[2].Outcome != "refused" || log[2].SQLState != string(pgerror.UndefinedColumn) {
		t.Fatalf("audit log = %+v", log)
	}
	first := log[0]
	if first.Shape != "select count(*) from people where suburb = $1 and age > $2" ||
		!reflect.DeepEqual(first.Constants, []release.Constant{{Text: "suburb_03", String: true}, {Text: "30"}}) {
		t.Errorf("statement recorded as %q %+v", first.Shape, first.Constants)
	}
	if len(first.Cells) != 1 || first.Cells[0].Value != float64(answered.Rows[0][0].Int) {
		t.Errorf("cells recorded %+v, the client received %+v", first.Cells, answered.Rows)
	}
	if len(log[1].Cells) != len(grouped.Rows) {
		t.Fatalf("grouped answer: recorded %d cells, sent %d rows", len(log[1].Cells), len(grouped.Rows))
	}
	for i, row := range grouped.Rows {
		c := log[1].Cells[i]
		if len(c.Group) != 1 || c.Group[0].Text != row[0].Text || c.Value != float64(row[1].Int) {
			t.Errorf("grouped row %d recorded %+v, sent %+v", i, c, row)
		}
	}
	refused := log[2]
	if refused.Shape != "" || len(refused.Constants) != 0 || strings.Contains(fmt.Sprint(refused), "suburb_0") {
		t.Errorf("refused entry holds the statement or a value: %+v", refused)
	}
}

// A gaussian answer's audit row records its zCDP charge: the rho the ledger
// was charged, which SHOW budget sums.
func TestAuditRecordsAZCDPCharge(t *testing.T) {
	f := newFixture(t, 50)
	e := f.open(t, "gaussian", nil)
	ctx := context.Background()
	if _, err := e.Query(ctx, "alice", "SELECT COUNT(*) FROM people WHERE age > 30"); err != nil {
		t.Fatal(err)
	}
	e.state.Flush()
	log, err := e.state.AuditLog(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	bals, err := e.budget.Balances(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	var rho float64
	for _, b := range bals {
		rho += b.RhoSpent
	}
	if len(log) != 1 || log[0].ChargeKind != "dp" || log[0].Rho <= 0 || log[0].Rho != rho {
		t.Errorf("audit %+v; the ledger holds rho %g", log, rho)
	}
}

// TestProtectedDatabaseIsNeverWritten runs every mechanism, and writes that
// must be refused, against a protected database and checks its bytes. When
// COUNTWALL_SUITE_DB names a generated people database (as .ci/run does,
// comparing the file's checksum before and after the whole suite), it is used
// instead of a fresh fixture.
func TestProtectedDatabaseIsNeverWritten(t *testing.T) {
	f := newFixture(t, 300)
	if suite := os.Getenv("COUNTWALL_SUITE_DB"); suite != "" {
		f.database = suite
	}
	sum := fileSum(t, f.database)
	for _, mech := range mechanismsUnderTest() {
		e := f.open(t, mech, nil)
		for _, q := range []string{
			"SELECT COUNT(*) FROM people",
			"SELECT sex, COUNT(*) FROM people GROUP BY sex",
			"DELETE FROM people",
			"DROP TABLE people",
			"PRAGMA journal_mode = WAL",
			"ATTACH DATABASE 'x' AS y",
		} {
			e.Query(context.Background(), "alice", q) //nolint:errcheck // writes must be refused; the file sum proves it
		}
		e.Close()
	}
	if fileSum(t, f.database) != sum {
		t.Fatal("the protected database file changed")
	}
}

func TestGroupByWithoutDomainNeedsADroppingMechanism(t *testing.T) {
	f := newFixture(t, 400)
	const q = "SELECT suburb, COUNT(*) FROM people GROUP BY suburb"
	tests := []struct {
		mech   string
		params map[string]any
		ok     bool
	}{
		{"exact", nil, false},
		{"cellkey", nil, false},
		{"bounded", nil, false},
		{"suppress", map[string]any{"mode": "zero"}, false},
		{"laplace", map[string]any{"partition_selection": map[string]any{"enabled": false}}, false},
		{"gaussian", map[string]any{"partition_selection": map[string]any{"enabled": false}}, false},
		{"suppress", map[string]any{"mode": "drop", "threshold": 10}, true},
		{"layered", nil, true},
		{"laplace", nil, true}, // partition selection
		{"gaussian", nil, true},
	}
	for _, tc := range tests {
		e := f.open(t, tc.mech, tc.params)
		res, err := e.Query(context.Background(), "alice", q)
		if tc.ok && mechanisms.SelectsPartitions(e.live.Load().mech) {
			// At the default share (epsilon 0.1) groups of 57 are released
			// only sometimes: answered, with at most the 7 suburbs.
			if err != nil || len(res.Rows) > 7 {
				t.Errorf("%s: %v, %d rows; want at most the 7 suburbs", tc.mech, err, len(rowsOf(res)))
			}
			continue
		}
		if tc.ok {
			if err != nil || len(res.Rows) != 7 {
				t.Errorf("%s %v: %v, %d rows; want the 7 suburbs (each has about 57 people)", tc.mech, tc.params, err, len(rowsOf(res)))
			}
			continue
		}
		var pe *pgerror.Error
		if !errors.As(err, &pe) || pe.Code != pgerror.FeatureNotSupported || !strings.Contains(pe.Message, `"suburb"`) || !strings.Contains(pe.Hint, "tables.people.domains.suburb") {
			t.Errorf("%s %v: error %v, want a 0A000 refusal naming suburb with a hint", tc.mech, tc.params, err)
		}
		e.Close()
	}
}

func rowsOf(res *Result) [][]Value {
	if res == nil {
		return nil
	}
	return res.Rows
}

// The databases and how the audit is written are fixed for the life of an
// Engine: a reload that changes them is refused and the old config stays.
func TestReloadRefusesStartOnlySettings(t *testing.T) {
	f := newFixture(t, 20)
	e := f.open(t, "exact", nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(*config.Config)
		want   string
	}{
		{"state", func(c *config.Config) { c.State += ".other" }, "database and state paths cannot change"},
		{"audit.sync", func(c *config.Config) { c.Audit.Sync = "normal" }, "audit.sync cannot change"},
	} {
		changed := *e.Config()
		tc.change(&changed)
		if err := e.Reload(ctx, &changed); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Reload = %v, want %q", tc.name, err, tc.want)
		}
	}
	if e.Config().Audit.Sync == "normal" {
		t.Error("a refused reload changed the config in force")
	}
}

package monitor

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	_ "modernc.org/sqlite"

	"countwall/config"
	"countwall/dataset"
	"countwall/pgerror"
	"countwall/proxy"
	"countwall/proxy/state"
)

// neighbours writes a 2,000-row people table and a copy with one person
// more, in the suburb and age band the differencing target asks about.
func neighbours(t *testing.T) (without, with string) {
	t.Helper()
	dir := t.TempDir()
	without, with = filepath.Join(dir, "without.db"), filepath.Join(dir, "with.db")
	if err := dataset.GeneratePeople(context.Background(), without, dataset.PeopleOptions{Rows: 2000, Seed: 1}, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(without)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(with, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", with)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO people (id, age, sex, suburb, income, marital, education, occupation, hours, zip, secret)
SELECT max(id) + 1, 70, 'F', 'suburb_0015', 40000, 'married', 'bachelor', 'retired', 1, 2015, 1 FROM people`); err != nil {
		t.Fatal(err)
	}
	return without, with
}

func engine(t *testing.T, database, mechanism string) (*proxy.Engine, string) {
	t.Helper()
	dir := t.TempDir()
	statePath := filepath.Join(dir, "state.db")
	cfgPath := filepath.Join(dir, "countwall.yaml")
	body := fmt.Sprintf("database: %s\nstate: %s\naudit: {sync: normal}\nmechanism: {name: %s}\nmechanisms: {suppress: {threshold: 10}, idp: {k: 1}}\nbudget: {epsilon_cap: 10}\ntables: {people: {privacy_unit: id}}\n", database, statePath, mechanism)
	if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := proxy.Open(context.Background(), cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, statePath
}

// TestMonitorDecidesOnReleasedAnswersOnly: mallory differences a
// suppressed count on one firewall; the analyst of ordinary queries asks
// a few counts once. The monitor suspends mallory, and only her; her next
// statement is refused with 42501. A second firewall over the neighbouring
// database (one person more, inside mallory's target) holding the same
// released answers in its audit decides exactly the same: the monitor
// reads the audit and nothing else.
func TestMonitorDecidesOnReleasedAnswersOnly(t *testing.T) {
	ctx := context.Background()
	without, with := neighbours(t)
	a, _ := engine(t, without, "suppress")
	for _, q := range []string{
		"SELECT COUNT(*) FROM people",
		"SELECT COUNT(*) FROM people WHERE NOT (suburb = 'suburb_0015' AND age > 60)",
	} {
		if _, err := a.Query(ctx, "mallory", q); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"SELECT COUNT(*) FROM people WHERE age > 60", "SELECT sex, COUNT(*) FROM people GROUP BY sex"} {
		a.Query(ctx, "demo", q) //nolint:errcheck // the outcome is the audit's
	}
	var logged []Decision
	decisionsA, err := New(a, a, Options{Suspend: true, OnDecision: func(d Decision) { logged = append(logged, d) }}).Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	decisionsA, logged = withoutTimes(decisionsA), withoutTimes(logged)
	n := trueCount(t, without, "suburb = 'suburb_0015' AND age > 60")
	one := 0
	if n == 1 {
		one = 1
	}
	want := []Decision{{Analyst: "mallory", Answered: 2, Findings: 1, Individuals: one, Patterns: "differencing 1", Suspend: n == 1}}
	if !reflect.DeepEqual(decisionsA, want) || !reflect.DeepEqual(logged, want) {
		t.Fatalf("decisions %+v (hook %+v), want %+v", decisionsA, logged, want)
	}

	// The neighbouring firewall, its audit holding the same releases.
	b, statePathB := engine(t, with, "suppress")
	b.Close()
	stB, err := state.Open(ctx, statePathB, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stB.Close()
	err = a.EachAudit(ctx, state.AuditFilter{}, func(e state.AuditEntry) error { return stB.AuditDurable(ctx, e) })
	if err != nil {
		t.Fatal(err)
	}
	decisionsB, err := New(stB, nil, Options{Suspend: true}).Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	decisionsB = withoutTimes(decisionsB)
	if !reflect.DeepEqual(decisionsA, decisionsB) {
		t.Errorf("neighbouring databases, same releases: decisions %+v and %+v", decisionsA, decisionsB)
	}
}

// TestMonitorSuspends: threshold answers under idp that pin a cell of one
// person suspend the analyst; her next statement is refused (42501) before
// it is read, and another analyst is not touched. A second check with
// nothing new answered decides nothing.
func TestMonitorSuspends(t *testing.T) {
	ctx := context.Background()
	e := pinnedByMallory(t)
	e.Query(ctx, "demo", "SELECT COUNT(*) FROM people WHERE age > 60") //nolint:errcheck // ordinary
	m := New(e, e, Options{Suspend: true})
	ds, err := m.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("decisions %+v", ds)
	if !e.Suspended("mallory") || e.Suspended("demo") {
		t.Fatalf("suspended: mallory %v, demo %v (decisions %+v)", e.Suspended("mallory"), e.Suspended("demo"), ds)
	}
	_, err = e.Query(ctx, "mallory", "SELECT COUNT(*) FROM people")
	if pgerror.SQLState(err) != pgerror.InsufficientPrivilege {
		t.Errorf("a suspended analyst's statement: %v, want 42501", err)
	}
	if _, err := e.Query(ctx, "demo", "SELECT COUNT(*) FROM people"); err != nil {
		t.Errorf("another analyst refused: %v", err)
	}
	// demo was answered once more and her answers still determine
	// nothing; mallory's refusal is not an answer.
	if again, err := m.Check(ctx); err != nil || len(again) != 0 {
		t.Errorf("second check: %+v, %v", again, err)
	}
}

func trueCount(t *testing.T, path, where string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM people WHERE " + where).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// uniqueCell is a suburb, age and sex that one person of the table has.
func uniqueCell(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var suburb, sex string
	var age int
	err = db.QueryRow(`SELECT suburb, age, sex FROM people GROUP BY suburb, age, sex HAVING count(*) = 1 ORDER BY suburb, age, sex LIMIT 1`).Scan(&suburb, &age, &sex)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("suburb = '%s' AND age = %d AND sex = '%s'", suburb, age, sex)
}

// withoutTimes drops the checks' durations, which are not decisions.
func withoutTimes(ds []Decision) []Decision {
	for i := range ds {
		ds[i].Took = 0
	}
	return ds
}

// TestMonitorReadsTheLatestHistoryOnly: with MaxHistory the check reads an
// analyst's latest answered statements and no more, so that its memory in
// serve is bounded. mallory's four statements that pin a person are
// followed by 6 ordinary ones: a window of 10 sees the pin (and says it
// read all it may), a window of 6 sees only the ordinary ones and decides
// nothing, a window of 11 reads everything and is no window.
func TestMonitorReadsTheLatestHistoryOnly(t *testing.T) {
	ctx := context.Background()
	e := pinnedByMallory(t)
	for age := 20; age < 26; age++ {
		if _, err := e.Query(ctx, "mallory", fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age > %d", age)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		maxHistory  int
		decisions   int
		individuals int
		answered    int
		window      bool
	}{
		{maxHistory: 6, decisions: 0},
		{maxHistory: 10, decisions: 1, individuals: 1, answered: 10, window: true},
		{maxHistory: 11, decisions: 1, individuals: 1, answered: 10, window: false},
	} {
		ds, err := New(e, nil, Options{MaxHistory: tc.maxHistory}).Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != tc.decisions {
			t.Fatalf("max history %d: decisions %+v, want %d", tc.maxHistory, ds, tc.decisions)
		}
		if tc.decisions == 0 {
			continue
		}
		d := ds[0]
		if d.Analyst != "mallory" || d.Individuals != tc.individuals || d.Answered != tc.answered || d.Window != tc.window {
			t.Errorf("max history %d: %+v, want %d about one person of %d answered, window %v", tc.maxHistory, d, tc.individuals, tc.answered, tc.window)
		}
	}
}

// pinnedByMallory is an idp firewall over the 2,000-row table where mallory
// has asked COUNT(*) > b, b = 0..3, of a cell one person is alone in: the
// answers for b = 0 and 1, both noisy under idp with k = 1, pin it at 1.
func pinnedByMallory(t *testing.T) *proxy.Engine {
	t.Helper()
	without, _ := neighbours(t)
	e, _ := engine(t, without, "idp")
	cell := uniqueCell(t, without)
	for _, b := range []int{0, 1, 2, 3} {
		if _, err := e.Query(context.Background(), "mallory", fmt.Sprintf("SELECT COUNT(*) > %d FROM people WHERE %s", b, cell)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

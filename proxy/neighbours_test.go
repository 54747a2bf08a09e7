package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"countwall/config"
	"countwall/ir"
	"countwall/mechanisms"
	"countwall/pgerror"
	"countwall/planner"
)

// A person of the neighbours test: rows of (id, age, sex, grp), where grp
// is stored in a column without a declared type.
type neighbourRow struct {
	id, age int
	sex     string
	grp     any
}

// neighbourBackground is 300 people: person p has 1 + p%3 rows (so the table
// is not keyed by its unit), ages 20..59, both sexes, grp 0..4 as integers.
func neighbourBackground() []neighbourRow {
	var rows []neighbourRow
	for p := 1; p <= 300; p++ {
		for range 1 + p%3 {
			rows = append(rows, neighbourRow{p, 20 + p%40, []string{"F", "M"}[p%2], int64(p % 5)})
		}
	}
	return rows
}

// target is the person the neighbours differ in: n rows, all age 30, F,
// grp 1, stored as the given value.
func target(n int, grp any) []neighbourRow {
	rows := make([]neighbourRow, n)
	for i := range rows {
		rows[i] = neighbourRow{9000, 30, "F", grp}
	}
	return rows
}

func writeNeighbourTable(t *testing.T, path string, rows []neighbourRow) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE people (id INTEGER NOT NULL, age INTEGER, sex TEXT, grp)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := tx.Exec(`INSERT INTO people VALUES (?, ?, ?, ?)`, r.id, r.age, r.sex, r.grp); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// neighbourWorlds are pairs of databases that differ in one person.
type neighbourWorld struct {
	name          string
	with, without []neighbourRow
	unitKeyed     bool
}

func neighbourWorlds() []neighbourWorld {
	bg := neighbourBackground()
	var keyed []neighbourRow // one row per person
	for p := 1; p <= 300; p++ {
		keyed = append(keyed, neighbourRow{p, 20 + p%40, []string{"F", "M"}[p%2], int64(p % 5)})
	}
	return []neighbourWorld{
		{name: "a unit with 1 row removed", with: append(slices.Clone(bg), target(1, int64(1))...), without: bg},
		{name: "a unit with 5 rows removed", with: append(slices.Clone(bg), target(5, int64(1))...), without: bg},
		{name: "a unit with 50 rows removed", with: append(slices.Clone(bg), target(50, int64(1))...), without: bg},
		{name: "a unit stored with another type", with: append(slices.Clone(bg), target(1, "1")...), without: append(slices.Clone(bg), target(1, int64(1))...)},
		{name: "keyed table, a unit removed", with: append(slices.Clone(keyed), target(1, int64(1))...), without: keyed, unitKeyed: true},
		// Not declared keyed, and every unit has one row until the person
		// comes with a second: the path must not change with it.
		{name: "undeclared one-row table, a unit with 2 rows added", with: append(slices.Clone(keyed), target(2, int64(1))...), without: append(slices.Clone(keyed), target(1, int64(1))...)},
	}
}

var neighbourShapes = []struct {
	name string
	sql  string
	drop bool // only for the mechanisms that drop low counts
}{
	{name: "count", sql: "SELECT COUNT(*) FROM people WHERE age = 30 AND sex = 'F'"},
	{name: "threshold", sql: "SELECT COUNT(*) > 3 FROM people WHERE age = 30"},
	{name: "group by a declared domain", sql: "SELECT grp, COUNT(*) FROM people WHERE sex = 'F' GROUP BY grp"},
	{name: "count distinct units", sql: "SELECT COUNT(DISTINCT id) FROM people WHERE age = 30"},
	{name: "group by without a domain", sql: "SELECT age, COUNT(*) FROM people WHERE sex = 'F' GROUP BY age", drop: true},
}

var neighbourMechanisms = []struct {
	name   string
	params map[string]any
	dp     bool // claims epsilon-DP per person: answers' distributions are checked
}{
	{name: "laplace", params: map[string]any{"max_rows_per_unit": 1}, dp: true},
	{name: "gaussian", dp: true},
	{name: "idp"},
	{name: "bdp"},
	{name: "cellkey"},
	{name: "bounded"},
	{name: "layered"},
	{name: "suppress", params: map[string]any{"mode": "drop"}},
}

// recordingBackend keeps the last cells the store computed, so that the
// test can see which path computed them and draw more answers from them.
type recordingBackend struct {
	inner Backend
	last  *ir.Result
}

func (r *recordingBackend) Run(ctx context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (*ir.Result, error) {
	res, err := r.inner.Run(ctx, t, q, needs, secret)
	r.last = res
	return res, err
}

// neighbourOutcome is what an analyst sees of one statement, beside the
// values: the SQLSTATE, the keys returned and the path that answered.
type neighbourOutcome struct {
	code pgerror.Code
	keys string
	path string
}

// neighbourDraws answers from one world's cells, for the distribution check:
// 10,000 draws per world; with Clopper-Pearson at alpha 1e-8 per bound and
// 21 thresholds x 4 events per comparison, the chance of a false failure
// is below 1e-6 per comparison.
const neighbourDraws = 10000

// TestNeighbouringDatabases sends every query shape under every mechanism to
// two databases that differ in one person, for every kind of neighbour. On
// both it wants the same SQLSTATE and the same path; for the mechanisms
// that do not drop low counts, the same keys; and for laplace and gaussian,
// answers whose distributions differ by no more than e^epsilon (the
// statistic is the sum of the answers; see violates).
func TestNeighbouringDatabases(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: answer distributions on neighbouring databases: skipped under -short; go test ./... runs it")
	}
	dir := t.TempDir()
	compared, distributions := 0, 0
	defer func() {
		// 6 worlds x (4 mechanisms x 4 shapes + laplace and gaussian x 5
		// shapes + 2 dropping mechanisms x 1 shape); laplace and gaussian
		// have the distributions of their 4 shapes over declared cells
		// checked in every world.
		if want := 6 * (4*4 + 2*5 + 2); compared != want || distributions != 6*2*4 {
			t.Errorf("compared %d statements and %d distributions, want %d and %d", compared, distributions, want, 6*2*4)
		}
	}()
	for wi, world := range neighbourWorlds() {
		paths := [2]string{filepath.Join(dir, fmt.Sprintf("with-%d.db", wi)), filepath.Join(dir, fmt.Sprintf("without-%d.db", wi))}
		writeNeighbourTable(t, paths[0], world.with)
		writeNeighbourTable(t, paths[1], world.without)
		for _, m := range neighbourMechanisms {
			engines := [2]*Engine{}
			recorders := [2]*recordingBackend{}
			for i, path := range paths {
				engines[i], recorders[i] = neighbourEngine(t, dir, fmt.Sprintf("%d-%d-%s", wi, i, m.name), path, m.name, m.params, world.unitKeyed)
			}
			for _, shape := range neighbourShapes {
				// laplace and gaussian answer every shape, the undeclared
				// GROUP BY by partition selection (its keys are tested in
				// TestPartitionSelectionNeighbours).
				if !m.dp && shape.drop != mechanisms.DropsLowCounts(engines[0].live.Load().mech) {
					continue
				}
				name := world.name + "/" + m.name + "/" + shape.name
				var outs [2]neighbourOutcome
				var results [2]*ir.Result
				for i, e := range engines {
					recorders[i].last = nil
					res, err := e.Query(context.Background(), "alice", shape.sql)
					outs[i] = neighbourOutcome{code: pgerror.SQLState(err), keys: resultKeys(res)}
					if recorders[i].last != nil {
						outs[i].path = recorders[i].last.Path
					}
					results[i] = recorders[i].last
				}
				compared++
				if outs[0].code != outs[1].code || outs[0].path != outs[1].path {
					t.Errorf("%s: with the person %+v, without %+v", name, outs[0], outs[1])
				}
				if !shape.drop && outs[0].keys != outs[1].keys {
					t.Errorf("%s: keys with the person %q, without %q", name, outs[0].keys, outs[1].keys)
				}
				if m.dp && !shape.drop && outs[0].code == "" {
					distributions++
					checkNeighbourDistributions(t, name, engines[0], results, shape.sql)
				}
			}
		}
	}
}

func neighbourEngine(t *testing.T, dir, name, database, mechanism string, params map[string]any, unitKeyed bool) (*Engine, *recordingBackend) {
	t.Helper()
	body := fmt.Sprintf(`
database: %s
state: %s
mechanism:
  name: %s
budget:
  epsilon: {default: 1, min: 0.01, max: 1}
  epsilon_cap: 1000000
  delta_cap: 0.001
tables:
  people:
    privacy_unit: id
    unit_keyed: %v
    domains:
      sex: [F, M]
      grp: ["0", "1", "2", "3", "4"]
`, database, filepath.Join(dir, name+"-state.db"), mechanism, unitKeyed)
	cfg := loadConfigText(t, filepath.Join(dir, name+".yaml"), body)
	cfg.Mechanism.Params = params
	e, err := Open(context.Background(), cfg, Options{NoiseSeed: 7})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	e.queueAnswerAudit = true // the test is about answers, not the audit's durability
	rec := &recordingBackend{inner: e.backend}
	e.backend = rec
	return e, rec
}

func resultKeys(res *Result) string {
	if res == nil {
		return ""
	}
	var keys []string
	for _, row := range res.Rows {
		k := ""
		for _, v := range row[:len(row)-1] {
			k += v.Text + "|"
		}
		keys = append(keys, k)
	}
	return fmt.Sprint(keys)
}

// checkNeighbourDistributions draws many answers from each world's cells
// through the Engine's mechanism, as the Engine answers, and bounds the
// privacy loss between them.
func checkNeighbourDistributions(t *testing.T, name string, e *Engine, results [2]*ir.Result, sqlText string) {
	t.Helper()
	rt := e.live.Load()
	stmt, err := planner.Parse(sqlText, nil, rt.catalog)
	if err != nil {
		t.Fatal(err)
	}
	q := stmt.(*ir.Query)
	const epsilon, delta = 1.0, 1e-6
	var samples [2][]int64
	var center int64
	for w, res := range results {
		req := &mechanisms.Request{Query: q, Table: rt.catalog.Tables[q.Table], Bounds: res.Bounds, Result: res, Epsilon: epsilon, Delta: delta}
		samples[w] = make([]int64, neighbourDraws)
		for i := range samples[w] {
			answers, _, err := rt.mech.Answer(context.Background(), req)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, a := range answers {
				samples[w][i] += a.Int
			}
		}
		if w == 1 {
			for _, c := range res.Cells {
				center += c.Count
			}
			if q.Threshold != nil {
				center = 0
			}
		}
	}
	if worst, bad := violates(samples[0], samples[1], center, epsilon); bad {
		t.Errorf("%s: a lower bound on the privacy loss is %.3f > %g", name, math.Log(worst), epsilon)
	}
}

// TestUnitKeyedIsCheckedAtStart: a table declared keyed by its unit whose
// rows are not is refused when the firewall starts, by key and without a
// value.
func TestUnitKeyedIsCheckedAtStart(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		rows []neighbourRow
		ok   bool
	}{
		{"one row per unit", []neighbourRow{{1, 30, "F", int64(1)}, {2, 31, "M", int64(2)}}, true},
		{"a unit with two rows", []neighbourRow{{1, 30, "F", int64(1)}, {1, 31, "F", int64(2)}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".db")
			writeNeighbourTable(t, path, tc.rows)
			body := fmt.Sprintf("database: %s\nstate: %s\ntables:\n  people:\n    privacy_unit: id\n    unit_keyed: true\n", path, filepath.Join(dir, tc.name+"-state.db"))
			cfg := loadConfigText(t, filepath.Join(dir, tc.name+".yaml"), body)
			e, err := Open(context.Background(), cfg, Options{})
			if err == nil {
				e.Close()
			}
			switch {
			case tc.ok && err != nil:
				t.Fatalf("Open: %v", err)
			case !tc.ok && err == nil:
				t.Fatal("a table declared unit_keyed with a unit of two rows was accepted")
			case !tc.ok && !strings.Contains(err.Error(), "tables.people.unit_keyed"):
				t.Fatalf("error %q does not name the key", err)
			}
		})
	}
}

// loadConfigText writes a config's text to path and loads it.
func loadConfigText(t *testing.T, path, body string) *config.Config {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

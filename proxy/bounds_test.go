package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"countwall/config"
	"countwall/ir"
	"countwall/mechanisms"
	"countwall/planner/plan"
)

// writeLongTable writes a long table (person, snp, allele): one row per
// person per attribute, as a genome table has, plus extra rows, and returns
// its path. rows are (person, snp, allele).
func writeLongTable(t testing.TB, dir, name string, rows [][3]int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE genomes (person INTEGER, snp INTEGER, allele INTEGER)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := tx.Exec(`INSERT INTO genomes VALUES (?, ?, ?)`, r[0], r[1], r[2]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}

// longRows is n people by d snps, allele (person*7 + snp*3) % 2.
func longRows(n, d int) [][3]int {
	var rows [][3]int
	for p := 1; p <= n; p++ {
		for s := range d {
			rows = append(rows, [3]int{p, s, (p*7 + s*3) % 2})
		}
	}
	return rows
}

func longConfig(t testing.TB, dir, database, mechanism, bounds string) *config.Config {
	t.Helper()
	body := fmt.Sprintf(`
database: %s
state: %s
mechanism:
  name: %s
budget:
  epsilon: {default: 1, min: 0.01, max: 100}
  epsilon_cap: 1000
tables:
  genomes:
    privacy_unit: person
%s
    domains:
      snp: {min: 0, max: 19}
      allele: {min: 0, max: 1}
`, database, filepath.Join(dir, "state.db"), mechanism, bounds)
	path := filepath.Join(dir, "countwall.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestGroupBySnpOnALongTable: GROUP BY snp over a declared domain on a long
// table (every person in all 20 cells) is answered under laplace with the
// table's bounds and charged the epsilon it claims, once. The sum of the
// cells is the sum of the bounded counts (40 people times min(G, 20) cells)
// within 3 per cell: at epsilon 100 the noise scale is at most 20/100, and a
// cell's noise exceeds 3 with probability exp(-15) < 1e-6.
func TestGroupBySnpOnALongTable(t *testing.T) {
	dir := t.TempDir()
	db := writeLongTable(t, dir, "long.db", longRows(40, 20))
	ctx := context.Background()
	for _, tc := range []struct {
		bounds    string
		wantTotal int64 // the sum of the true bounded counts
	}{
		{"", 40},                             // G = 1: each person in one cell
		{"    max_groups_per_unit: 20", 800}, // every person in every cell
		{"    max_groups_per_unit: 5", 200},
	} {
		e, err := Open(ctx, longConfig(t, dir, db, "laplace", tc.bounds), Options{NoiseSeed: 3})
		if err != nil {
			t.Fatal(err)
		}
		s := e.NewSession("alice")
		if _, err := s.Exec(ctx, "SET epsilon = 100", nil); err != nil {
			t.Fatal(err)
		}
		res, err := s.Exec(ctx, "SELECT snp, COUNT(*) FROM genomes GROUP BY snp", nil)
		if err != nil {
			t.Fatalf("%q: %v", tc.bounds, err)
		}
		var total int64
		for _, row := range res.Rows {
			total += row[1].Int
		}
		if len(res.Rows) != 20 || math.Abs(float64(total-tc.wantTotal)) > 20*3 {
			t.Errorf("%q: %d cells summing to %d, want 20 summing to about %d", tc.bounds, len(res.Rows), total, tc.wantTotal)
		}
		bals, err := e.budget.Balances(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if len(bals) == 0 || bals[0].Kind != mechanisms.AccountingDP || bals[0].EpsilonSpent != 100 {
			t.Errorf("%q: balances %+v, want epsilon 100 spent once", tc.bounds, bals)
		}
		e.Close()
		os.Remove(filepath.Join(dir, "state.db"))
	}
}

// The neighbouring-databases test, in the style of StatDP (Ding et al.,
// CCS 2018) and DP-Sniper (Bichsel et al., S&P 2021): a database with a
// target person who has r rows (r = 1, 5, 50), in one cell or in r cells,
// and the same database without that person. Each is counted once by the
// planner (the bounded counts are deterministic) and answered N = 20,000
// times by the mechanism with seeded noise; the statistic is the sum of the
// answers. For every event {statistic >= t} (21 thresholds around the true
// value) and its complement, in both directions, the test rejects the claim
// when the Clopper-Pearson lower bound of one probability exceeds e^epsilon
// times the upper bound of the other, each bound at level alpha = 1e-8.
// About 84 comparisons per case and 12 cases make the family-wise
// false-failure rate below 2 * 1008 * 1e-8 = 2.1e-5.
const (
	dpTestDraws = 20000
	dpTestAlpha = 1e-8
)

// clopperPearson is the one-sided (lower, upper) bound pair for k successes
// in n trials, each at level alpha.
func clopperPearson(k, n int, alpha float64) (lo, hi float64) {
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha)
	}
	hi = 1
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha)
	}
	return lo, hi
}

// violates reports the worst evidence against epsilon-DP between two samples
// of the statistic: the largest lower-bound ratio found, and whether it
// exceeds e^epsilon.
func violates(with, without []int64, center int64, epsilon float64) (worst float64, rejected bool) {
	n := len(with)
	for t := center - 10; t <= center+10; t++ {
		var a, b int
		for i := range n {
			if with[i] >= t {
				a++
			}
			if without[i] >= t {
				b++
			}
		}
		for _, pair := range [][2]int{{a, b}, {b, a}, {n - a, n - b}, {n - b, n - a}} {
			lo, _ := clopperPearson(pair[0], n, dpTestAlpha)
			_, hi := clopperPearson(pair[1], n, dpTestAlpha)
			if ratio := lo / hi; ratio > worst {
				worst = ratio
			}
		}
	}
	return worst, worst > math.Exp(epsilon)
}

// neighbourSample answers q N times over the bounded cells of the database
// at path, returning the sum of the answers of each run. lie replaces the
// cells by unbounded counts while keeping the claimed bounds: the test's
// power check.
func neighbourSample(t *testing.T, path string, table *ir.Table, q *ir.Query, m mechanisms.Mechanism, epsilon float64, lie bool) ([]int64, int64) {
	t.Helper()
	s, err := OpenStore(path, plan.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	secret := []byte("neighbour test secret")
	res, err := s.Run(context.Background(), table, q, m.Needs(), secret)
	if err != nil {
		t.Fatal(err)
	}
	if lie {
		raw, err := s.Run(context.Background(), table, q, ir.Needs{}, secret)
		if err != nil {
			t.Fatal(err)
		}
		raw.Bounds = res.Bounds
		res = raw
	}
	var truth int64
	for _, c := range res.Cells {
		truth += c.Count
	}
	out := make([]int64, dpTestDraws)
	req := &mechanisms.Request{Query: q, Result: res, Epsilon: epsilon, Delta: 1e-6}
	for i := range out {
		answers, charge, err := m.Answer(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if charge.Epsilon != epsilon {
			t.Fatalf("charged %+v for epsilon %g", charge, epsilon)
		}
		for _, a := range answers {
			out[i] += a.Int
		}
	}
	return out, truth
}

func TestRemovingAPersonMovesAnswersByAtMostEpsilon(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: answer distributions with and without a person: skipped under -short; go test ./... runs it")
	}
	const epsilon = 1.0
	dir := t.TempDir()
	// 30 background people, one row each in snp (p % 10).
	var background [][3]int
	for p := 1; p <= 30; p++ {
		background = append(background, [3]int{p, p % 10, 0})
	}
	without := writeLongTable(t, dir, "without.db", background)
	table := &ir.Table{Name: "genomes", PrivacyUnit: "person", Policy: ir.DefaultPolicy(),
		Columns: map[string]*ir.Column{
			"person": {Name: "person", Type: ir.TypeInt},
			"snp":    {Name: "snp", Type: ir.TypeInt, Domain: &ir.Domain{IsRange: true, Min: 0, Max: 49}},
		}}
	plain := &ir.Query{Table: "genomes"}
	bySnp := &ir.Query{Table: "genomes", GroupBy: []string{"snp"}}
	for _, r := range []int{1, 5, 50} {
		for _, spread := range []bool{false, true} {
			rows := append([][3]int(nil), background...)
			for i := range r {
				snp := 7
				if spread {
					snp = i
				}
				rows = append(rows, [3]int{1000, snp, 1})
			}
			with := writeLongTable(t, dir, fmt.Sprintf("with-%d-%v.db", r, spread), rows)
			for _, tc := range []struct {
				q      *ir.Query
				params mechanisms.Params
			}{
				{plain, nil},
				{bySnp, mechanisms.Params{"max_rows_per_unit": 3, "max_groups_per_unit": 2}},
			} {
				name := fmt.Sprintf("r=%d spread=%v groups=%v params=%v", r, spread, tc.q.GroupBy, tc.params)
				m, err := mechanisms.New("laplace", tc.params, mechanisms.Env{Seed: int64(r*10 + len(tc.params))})
				if err != nil {
					t.Fatal(err)
				}
				a, _ := neighbourSample(t, with, table, tc.q, m, epsilon, false)
				b, center := neighbourSample(t, without, table, tc.q, m, epsilon, false)
				if worst, bad := violates(a, b, center, epsilon); bad {
					t.Errorf("%s: a lower bound on the privacy loss is %.3f > e^%g", name, math.Log(worst), epsilon)
				}
				// Power: counting the person's rows unbounded while claiming
				// the bounds is caught for r = 50 in one cell.
				if r == 50 && !spread && tc.q == plain {
					a, _ := neighbourSample(t, with, table, tc.q, m, epsilon, true)
					if worst, bad := violates(a, b, center, epsilon); !bad {
						t.Errorf("%s: the test did not catch unbounded counts (loss bound %.3f)", name, math.Log(worst))
					}
				}
			}
		}
	}
}

// TestShowMechanismStatesClaimAndBounds: SHOW mechanism's first row is the
// name, then the claim, then the bounds in force per table (the table's,
// overridden by the mechanism's own parameters); parameters appear only
// with publish_parameters.
func TestShowMechanismStatesClaimAndBounds(t *testing.T) {
	dir := t.TempDir()
	db := writeLongTable(t, dir, "long.db", longRows(3, 20))
	ctx := context.Background()
	cases := []struct {
		mechanism, bounds string
		params            map[string]any
		want              []string // rows, the claim's only by prefix
	}{
		{"laplace", "    max_groups_per_unit: 5", nil,
			[]string{"laplace", "laplace: epsilon-differential privacy per person", "bounds on genomes: max_rows_per_unit 1, max_groups_per_unit 5",
				"GROUP BY without a declared domain at this session's share (epsilon 1, delta 1e-06): partition selection at epsilon 0.5, delta 1e-06"}},
		{"gaussian", "    max_rows_per_unit: 2", map[string]any{"max_groups_per_unit": 3},
			[]string{"gaussian", "gaussian: (epsilon, delta)-differential privacy per person", "bounds on genomes: max_rows_per_unit 2, max_groups_per_unit 3",
				"GROUP BY without a declared domain at this session's share (epsilon 1, delta 1e-06): partition selection at epsilon 0.5, delta 5e-07"}},
		{"bounded", "", map[string]any{"range": 3},
			[]string{"bounded", "bounded: fresh uniform integer noise on every answer, clamped at 0; averaging repeated queries recovers the true count; offers no formal privacy guarantee"}},
		{"bounded", "", map[string]any{"range": 3, "publish_parameters": true},
			[]string{"bounded", "bounded: fresh uniform integer noise on every answer, clamped at 0; averaging repeated queries recovers the true count; offers no formal privacy guarantee (range 3)"}},
	}
	for _, tc := range cases {
		cfg := longConfig(t, dir, db, tc.mechanism, tc.bounds)
		cfg.Mechanism.Params = tc.params
		e, err := Open(ctx, cfg, Options{NoiseSeed: 3})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Query(ctx, "alice", "SHOW mechanism")
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != len(tc.want) {
			t.Errorf("%s %v: %d rows %v, want %d", tc.mechanism, tc.params, len(res.Rows), rowsOf(res), len(tc.want))
			continue
		}
		for i, w := range tc.want {
			got := res.Rows[i][0].Text
			if got != w && !(i == 1 && len(got) > len(w) && got[:len(w)] == w && tc.mechanism != "bounded") {
				t.Errorf("%s %v row %d: %q, want %q", tc.mechanism, tc.params, i, got, w)
			}
		}
	}
}

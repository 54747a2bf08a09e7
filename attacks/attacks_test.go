package attacks

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countwall/config"
	"countwall/dataset"
	"countwall/proxy"
)

// protectedDB is a 5,000-row people table of the test's own.
func protectedDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "people.db")
	if err := dataset.GeneratePeople(context.Background(), path, dataset.PeopleOptions{Rows: 5000, Seed: 3}, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return path
}

// engineQuerier fronts the protected database with a mechanism in process.
func engineQuerier(t *testing.T, mechanism, params string, epsilonCap float64) *Logged {
	t.Helper()
	dir := t.TempDir()
	body := fmt.Sprintf(`database: %s
state: %s
mechanism: {name: %s}
mechanisms:
  %s: {%s}
budget: {epsilon_cap: %g}
tables:
  people:
    privacy_unit: id
    domains: {sex: [F, M]}
`, protectedDB(t), filepath.Join(dir, "state.db"), mechanism, mechanism, params, epsilonCap)
	path := filepath.Join(dir, "countwall.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := proxy.Open(context.Background(), cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &Logged{Querier: InProcess{Session: e.NewSession("mallory")}}
}

// smallTarget is a cell of 1..10 people, which suppress withholds.
var smallTarget = Target{Table: "people", Where: "suburb = 'suburb_0015' AND age > 60"}

func TestDifferencingRecoversASuppressedCount(t *testing.T) {
	ctx := context.Background()
	truth, err := TrueCount(ctx, protectedDB(t), smallTarget)
	if err != nil {
		t.Fatal(err)
	}
	if truth < 1 || truth > 10 {
		t.Fatalf("target has %d people; the test needs a cell suppress withholds", truth)
	}
	q := engineQuerier(t, "suppress", "threshold: 10", 1)
	direct, err := Count(ctx, q, smallTarget.querySQL())
	if err != nil || direct != 0 {
		t.Fatalf("the firewall answered the target directly with %g (%v), want a suppressed 0", direct, err)
	}
	var log bytes.Buffer
	q.Log = &log
	res, err := Execute(ctx, Differencing, q, Options{Target: smallTarget}, protectedDB(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Recovered != truth || res.Exact == nil || !*res.Exact {
		t.Errorf("recovered %d, truth %d", res.Recovered, truth)
	}
	if res.Queries != 3 { // the direct probe above and the two differencing queries
		t.Errorf("queries = %d, want 3", res.Queries)
	}
	wantLog := "SELECT COUNT(*) FROM people;\nSELECT COUNT(*) FROM people WHERE NOT (suburb = 'suburb_0015' AND age > 60);\n"
	if log.String() != wantLog {
		t.Errorf("SQL log =\n%s\nwant\n%s", log.String(), wantLog)
	}
	if got := strings.Join(Differencing.Script(Options{Target: smallTarget}), ";\n") + ";\n"; got != wantLog {
		t.Errorf("emitted script differs from what was sent:\n%s", got)
	}
}

func TestAveragingRecoversACountBehindFreshNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: averages of fresh noisy counts: skipped under -short; go test ./... runs it")
	}
	ctx := context.Background()
	target := Target{Table: "people", Where: "sex = 'F' AND age BETWEEN 40 AND 44"}
	truth, err := TrueCount(ctx, protectedDB(t), target)
	if err != nil {
		t.Fatal(err)
	}
	q := engineQuerier(t, "bounded", "range: 5", 1)
	res, err := Execute(ctx, Averaging, q, Options{Target: target}, protectedDB(t))
	if err != nil {
		t.Fatal(err)
	}
	// The stop rule leaves 3 standard errors below 1/2: the rounded mean is
	// wrong with probability below 0.003 (normal approximation), so this
	// seeded run is checked exactly. Noise uniform on -5..5 has sd 3.16, so
	// the rule needs about (3*3.16/0.5)^2 = 360 answers.
	if res.Recovered != truth {
		t.Errorf("recovered %d after %d queries, truth %d", res.Recovered, res.Queries, truth)
	}
	if res.Queries < 100 || res.Queries > 2000 {
		t.Errorf("queries = %d, want a few hundred", res.Queries)
	}
}

func TestAttacksAgainstLaplaceStopAtTheBudget(t *testing.T) {
	ctx := context.Background()
	target := Target{Table: "people", Where: "sex = 'F' AND age BETWEEN 40 AND 44"}
	truth, err := TrueCount(ctx, protectedDB(t), target)
	if err != nil {
		t.Fatal(err)
	}
	q := engineQuerier(t, "laplace", "", 1) // ten queries at the default epsilon 0.1
	res, err := Execute(ctx, Averaging, q, Options{Target: target}, protectedDB(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Queries != 11 || res.Refused != 1 || !strings.Contains(res.Note, "exhausted") {
		t.Errorf("queries %d, refused %d, note %q: want 10 answers then a refusal", res.Queries, res.Refused, res.Note)
	}
	if res.Spent["dp"] < 1-1e-9 {
		t.Errorf("spent %v, want the whole cap of 1", res.Spent)
	}
	// Ten answers with Laplace scale 10 average to the truth within about
	// 4.5 (one standard error); an exact hit is a coincidence, not a leak.
	t.Logf("laplace: estimate %.1f of truth %d after %d answers", res.Estimate, truth, res.Queries-res.Refused)
}

// Under laplace the firewall refuses the tiny epsilon share a threshold
// attack asks for (its range starts at 0.001); the oracle says so and goes
// on with the session's share of 0.1, so that the cap of 1 ends it after ten
// answers with the budget's SQLSTATE.
func TestThresholdOracleUnderLaplace(t *testing.T) {
	ctx := context.Background()
	q := engineQuerier(t, "laplace", "", 1)
	o, err := NewThresholdOracle(ctx, q, "people", ThresholdSetup{GroupK: -1, Rows: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if o.K != 0 || !strings.Contains(o.Note, "refused an epsilon share of 1e-10") {
		t.Fatalf("k = %d, note %q; want 0 and the refusal noted", o.K, o.Note)
	}
	answered := 0
	for {
		_, err := o.Probe(ctx, "sex = 'F'", 2500)
		if err != nil {
			if !IsBudgetExhausted(err) {
				t.Fatalf("after %d answers: %v", answered, err)
			}
			break
		}
		answered++
		if answered > 10 {
			t.Fatal("more than ten answers at 0.1 each under a cap of 1")
		}
	}
	if answered != 10 {
		t.Errorf("%d answers before the refusal, want 10", answered)
	}
}

// The perturbation finder under laplace: three complete triples fit in the
// ten answers a cap of 1 allows, the eleventh query is refused, and the
// attack ends with what it has instead of an error.
func TestPerturbationFinderStopsAtTheBudget(t *testing.T) {
	ctx := context.Background()
	q := engineQuerier(t, "laplace", "", 1)
	o := PerturbationFinder.Demo()
	o.Target.Table = "people"
	res, err := Execute(ctx, PerturbationFinder, q, o, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Queries != 11 || res.Refused != 1 || !strings.Contains(res.Note, "stopped at cell 4") {
		t.Errorf("queries %d, refused %d, note %q: want ten answers, a refusal at cell 4", res.Queries, res.Refused, res.Note)
	}
}

// "charged" is what a run cost, not the analyst's running total: the same
// analyst runs differencing (2 queries at the default share of 0.1) three
// times under laplace, and each run is charged 0.2 while the total grows by
// 0.2 a run. The charges are deterministic (the noise is not read).
func TestExecuteRecordsTheRunsOwnCharge(t *testing.T) {
	ctx := context.Background()
	q := engineQuerier(t, "laplace", "", 10)
	for run := 1; run <= 3; run++ {
		res, err := Execute(ctx, Differencing, &Logged{Querier: q.Querier}, Options{Target: smallTarget}, "")
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.Charged["dp"]-0.2) > 1e-9 || res.Charged["idp"] != 0 || res.Charged["bdp"] != 0 {
			t.Errorf("run %d: charged %v, want dp 0.2 and nothing else", run, res.Charged)
		}
		if want := 0.2 * float64(run); math.Abs(res.Spent["dp"]-want) > 1e-9 {
			t.Errorf("run %d: the analyst's total is %v, want dp %g", run, res.Spent, want)
		}
	}
}

func TestDifference(t *testing.T) {
	for _, tc := range []struct {
		name          string
		after, before map[string]float64
		want          map[string]float64
	}{
		{"nothing read", nil, nil, map[string]float64{}},
		{"first charge", map[string]float64{"dp": 0.5}, nil, map[string]float64{"dp": 0.5}},
		{"on top of earlier spending", map[string]float64{"dp": 1.5, "idp": 3e-10}, map[string]float64{"dp": 1, "idp": 1e-10}, map[string]float64{"dp": 0.5, "idp": 2e-10}},
		{"a kind only before", map[string]float64{"dp": 1}, map[string]float64{"dp": 1, "bdp": 0.25}, map[string]float64{"dp": 0, "bdp": -0.25}},
	} {
		got := Difference(tc.after, tc.before)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			continue
		}
		for k, v := range tc.want {
			if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-18 {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

package attacks_test

import (
	"context"
	"math"
	"testing"

	"countwall/attacks"
	"countwall/ir"
)

// Against laplace the variance test fails: the answers are plain 0s and 1s,
// psi is about 0, and it recovers nothing; read as idp's answers they would
// say sensitivity 0 for a query whose idp sensitivity is 1, and the note
// says that no answer carried noise. Told k (the user vouches for idp), it
// decides 0: wrong.
func TestIDPVarianceFailsAgainstLaplace(t *testing.T) {
	f := varianceFirewall(t, "laplace", nil, 3)
	for _, k := range []int64{-1, 1} {
		r, err := attackNamed(t, "idp-variance").Run(context.Background(), f, attacks.Options{
			Target: attacks.Target{Table: "t", Where: "v = 1"}, Threshold: attacks.ThresholdSetup{GroupK: k, Rows: 101}, M: 1000,
		})
		if err != nil {
			t.Fatal(err)
		}
		undecided, guess := true, any(int64(0))
		if k >= 0 {
			undecided, guess = false, nil
		}
		if r.Undecided != undecided || r.Recovered != 0 || r.Details["guess"] != guess || r.Estimate > 1e-6 || r.Details["exact_answers"] != 1000 {
			t.Errorf("against laplace, k = %d: recovered %d (undecided %v, guess %v) with psi %g and %v exact answers; want 0 (undecided %v, guess %v), about 0 and 1000",
				k, r.Recovered, r.Undecided, r.Details["guess"], r.Estimate, r.Details["exact_answers"], undecided, guess)
		}
		t.Log(r.Note)
	}
}

// Through the real Engine (idp with plus_one, seeded): the demo person's
// probe has sensitivity 1 and a non-member's 0, and the test tells them
// apart at m = 300 (by simulation over 1,000,000 trials a decision is wrong
// with probability about 1.5e-4 at sensitivity 1 and below 1e-6 at 0); the
// emitted script is SET epsilon and the m queries the run sends.
func TestIDPVarianceThroughEngine(t *testing.T) {
	q := targetsEngine(t, "idp", "k: 1, plus_one: true")
	const m = 300
	for _, p := range targetsPredicates[:2] {
		o := attackNamed(t, "idp-variance").Demo()
		o.Target.Where, o.M = p.where, m
		r := runScored(t, q, "idp-variance", o)
		if r.Recovered != p.count || r.Success == nil || *r.Success != 1 {
			t.Errorf("count %d: decided sensitivity %d (%s)", p.count, r.Recovered, r.Note)
		}
		if r.Queries != m {
			t.Errorf("count %d: %d queries, want %d", p.count, r.Queries, m)
		}
		if got, want := claimedEpsilon(r), m*attacks.DefaultThresholdEpsilon; math.Abs(got-want) > want*1e-6 {
			t.Errorf("the ledger claims %g, want %g", got, want)
		}
		t.Log(r.Note)
	}
	o := attackNamed(t, "idp-variance").Demo()
	o.M = m
	if s := attackNamed(t, "idp-variance").Script(o); len(s) != m+1 || s[0] != "SET epsilon = 1e-10" || s[m] != "SELECT COUNT(*) > 1 FROM people WHERE "+o.Target.Where {
		t.Errorf("script of %d statements: %q ... %q", len(s), s[0], s[len(s)-1])
	}
}

// varianceFirewall is the grouped stand-in behind an Engine over one column
// v under the named mechanism (seeded): one row with v = 1, none with
// v = 0, 100 with v = 2. The probe `COUNT(*) > 1` has sensitivity 1 on
// v = 1 (a count of 1) and 0 on v = 0 (a count of 0).
func varianceFirewall(t testing.TB, mechanism string, params map[string]any, seed int64) *standIn {
	t.Helper()
	groups := []ir.Group{{Values: []any{int64(1)}, Count: 1}, {Values: []any{int64(2)}, Count: 100}}
	return openStandIn(t, ir.GroupedTable{Name: "t", Columns: []ir.GroupedColumn{{Name: "v", Type: ir.TypeInt}}, Groups: groups}, mechanism, params, seed)
}

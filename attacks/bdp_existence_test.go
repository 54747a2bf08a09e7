package attacks_test

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"countwall/attacks"
)

// bdp-existence through the real Engine, one plain count per combination:
// under bdp (and exact) it classifies every combination right, both for the
// demo's 480 combinations of education, marital status and occupation and
// for the ages and sexes of one suburb's 4 residents, and the ledger claims
// combinations x 1e-10. Under laplace (seeded) each answer is an integer
// noisy count that is 0 about half the time whatever the truth: the
// classification is a coin flip, right for about half the combinations; the
// bound 65% is 6.5 standard errors (0.023 over 480) above one half.
func TestBDPExistenceThroughEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: 480 combinations against seeded laplace: skipped under -short; go test ./... runs it")
	}
	suburb := attacks.Options{
		Target:  attacks.Target{Table: "people", Where: "suburb = 'suburb_0163'"},
		Domains: []attacks.Domain{{Column: "age", Lo: 0, Hi: 100}, {Column: "sex", Categories: []string{"F", "M"}}},
	}
	for _, tc := range []struct {
		name        string
		mechanism   string
		o           attacks.Options
		combos      int
		minSuccess  float64
		maxSuccess  float64
		claimed     float64
		fractionals bool // whether answers for existing combinations carry fractional noise
	}{
		{"bdp demo", "bdp", attackNamed(t, "bdp-existence").Demo(), 480, 1, 1, 480e-10, true},
		{"bdp one suburb", "bdp", suburb, 202, 1, 1, 202e-10, true},
		{"exact demo", "exact", attackNamed(t, "bdp-existence").Demo(), 480, 1, 1, 0, false},
		{"laplace demo", "laplace", attackNamed(t, "bdp-existence").Demo(), 480, 0, 0.65, 480e-10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := targetsEngine(t, tc.mechanism, "")
			r := runScored(t, q, "bdp-existence", tc.o)
			if r.Queries != tc.combos || r.CellsTotal != tc.combos {
				t.Errorf("%d queries for %d cells, want %d", r.Queries, r.CellsTotal, tc.combos)
			}
			if *r.Success < tc.minSuccess || *r.Success > tc.maxSuccess {
				t.Errorf("classified %.1f%% of combinations right, want %.0f%% to %.0f%% (%s)", 100**r.Success, 100*tc.minSuccess, 100*tc.maxSuccess, r.Note)
			}
			if got := claimedEpsilon(r); math.Abs(got-tc.claimed) > tc.claimed*1e-6 {
				t.Errorf("the ledger claims %g, want %g", got, tc.claimed)
			}
			if frac := r.Details["fractional_answers"].(int); (frac > 0) != tc.fractionals {
				t.Errorf("%d answers with a fractional part", frac)
			}
			t.Logf("%s: %s; truth %d existing, %.1f%% right", tc.mechanism, r.Note, *r.Truth, 100**r.Success)
		})
	}
}

// The emitted script is exactly what a run sends; a product of domains over
// 10,000 combinations is refused before any query.
func TestBDPExistenceScriptAndLimit(t *testing.T) {
	q := targetsEngine(t, "bdp", "")
	a := attackNamed(t, "bdp-existence")
	o := a.Demo()
	var log bytes.Buffer
	if _, err := attacks.Execute(context.Background(), a, &attacks.Logged{Querier: q.Querier, Log: &log}, o, ""); err != nil {
		t.Fatal(err)
	}
	script := strings.Join(a.Script(o), ";\n") + ";\n"
	if log.String() != script {
		t.Errorf("the run's SQL log differs from the script (%d and %d bytes)", log.Len(), len(script))
	}
	if want := "SELECT COUNT(*) FROM people WHERE education = 'bachelor' AND marital = 'divorced' AND occupation = 'clerical'"; a.Script(o)[1] != want {
		t.Errorf("first query %q, want %q", a.Script(o)[1], want)
	}
	big := attacks.Options{Target: attacks.Target{Table: "people"}, Domains: []attacks.Domain{{Column: "age", Lo: 0, Hi: 100}, {Column: "zip", Lo: 2000, Hi: 2249}}}
	l := &attacks.Logged{Querier: q.Querier}
	if _, err := a.Run(context.Background(), l, big); err == nil || l.Sent() != 0 {
		t.Errorf("25,250 combinations: err %v after %d queries", err, l.Sent())
	}
	if a.Script(big) != nil {
		t.Error("a script for 25,250 combinations")
	}
}

package attacks_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"countwall/attacks"
	"countwall/dataset"
)

// demoPeople is the demo's table, 20,000 people (seed 1), on which
// docs/attacks.md measures the sum attacks (`countwall gen people --rows
// 20000` writes the same). Its 25 students of suburb_0032 earn 17,400,
// 9,800 of it person 1129's and 7,600 person 3057's; its 23 students of
// suburb_0028 earn 28,000, 13,700 of it person 6640's, 11,500 person
// 2714's and 2,800 a third's; its 44 students and retired people of
// suburb_0032 earn 891,400, the 19 retired 874,000.
func demoPeople(t testing.TB) string {
	t.Helper()
	return sharedDB(t, "demo-people.db", func(path string) error {
		return dataset.GeneratePeople(context.Background(), path, dataset.PeopleOptions{Rows: 20000, Seed: 1}, dataset.WriteOptions{})
	})
}

// demoTables declares the bounds of income, as the demo does, and of hours,
// and occupation's public domain, which suppress needs to GROUP BY it.
const demoTables = peopleTables + "    bounds:\n      income: {min: 0, max: 500000}\n      hours: {min: 1, max: 99}\n" +
	"    domains:\n      occupation: [managers, professionals, technicians, community_service, clerical, sales,\n" +
	"        machinery_operators, labourers, student, retired, unemployed, home_duties]\n"

// sumEngine is a session of an Engine in process over the demo table under
// mechanism with params: its secret fixed (cellkey and layered answer the
// same every run) and its fresh noise seeded (so does bounded). The budget
// is the demo's laplace firewall's: 0.1 a query, a cap of 1.
func sumEngine(t *testing.T, mechanism, params string) *attacks.Logged {
	t.Helper()
	st := filepath.Join(t.TempDir(), "state.db")
	fixedSecret(t, st, "sums")
	body := fmt.Sprintf("database: %s\nstate: %s\nmechanism: {name: %s}\nmechanisms:\n  %s: {%s}\n"+
		"budget:\n  epsilon: {default: 0.1, min: 0.001, max: 1}\n  epsilon_cap: 1\n%s",
		demoPeople(t), st, mechanism, mechanism, params, demoTables)
	e, _ := openSeededEngine(t, body, 1)
	return &attacks.Logged{Querier: attacks.InProcess{Session: e.NewSession("attacker")}}
}

// Under suppress's p% rule and (2, 85) dominance both students' cells are
// withheld, and the total less the complement gives each back exactly in
// three queries (the cell asked first, withheld). The attacker's own income
// then estimates the largest: exactly where the cell has two earners, and
// within the third earner's 2,800 (20.4% of 13,700) where it has three:
// the p% rule withheld the cell so that no contributor could come within
// p% of the largest, and differencing gets within what the cell holds. An
// attacker who is not among the cell's contributors (id 1) still recovers
// the sum, and the result says the largest was not estimated.
func TestSumDifferencingUnderSuppress(t *testing.T) {
	for _, tc := range []struct {
		suburb, own         string
		sum                 int64
		largest, largestEst float64
	}{
		{"suburb_0032", "id = 3057", 17400, 9800, 9800},
		{"suburb_0028", "id = 2714", 28000, 13700, 16500},
		{"suburb_0032", "id = 1", 17400, 0, 0},
	} {
		o := attacks.SumDifferencing.Demo()
		o.Target.Where = "suburb = '" + tc.suburb + "' AND occupation = 'student'"
		o.Background = demoPeople(t)
		o.Params.(*attacks.SumDifferencingParams).Own = tc.own
		res, err := attacks.Execute(context.Background(), attacks.SumDifferencing, sumEngine(t, "suppress", "threshold: 10, p_percent: 10"), o, demoPeople(t))
		if err != nil {
			t.Fatalf("%s: %v", tc.suburb, err)
		}
		if res.Recovered != tc.sum || !*res.Exact || res.Queries != 3 || res.Refused != 0 || res.Details["cell_withheld"] != true {
			t.Errorf("%s: recovered %d (exact %v) in %d queries, %d refused, withheld %v; want the withheld %d exactly in 3",
				tc.suburb, res.Recovered, *res.Exact, res.Queries, res.Refused, res.Details["cell_withheld"], tc.sum)
		}
		if tc.largest == 0 {
			if _, estimated := res.Details["largest_estimate"]; estimated || !strings.Contains(res.Note, "the largest contribution was not estimated") {
				t.Errorf("%s with %s: details %v, note %q; want no estimate of the largest, said", tc.suburb, tc.own, res.Details, res.Note)
			}
			continue
		}
		rel := math.Abs(tc.largestEst-tc.largest) / tc.largest
		if res.Details["largest"] != tc.largest || res.Details["largest_estimate"] != tc.largestEst || res.Details["largest_relative_error"] != rel {
			t.Errorf("%s: largest %v estimated %v (relative error %v); want %v estimated %v (%v)", tc.suburb,
				res.Details["largest"], res.Details["largest_estimate"], res.Details["largest_relative_error"], tc.largest, tc.largestEst, rel)
		}
	}
}

// Secondary suppression closes the margin within one GROUP BY: students
// and retired people of suburb_0032 by occupation withholds both (the ten
// other occupations are empty by the WHERE and hide nothing), where without
// it the margin less the retired gives the students. The complement route,
// the margin and the retired asked apart, still gives them: 891,400 less
// 874,000 is the students' 17,400.
func TestSecondarySuppressionAndTheComplement(t *testing.T) {
	ctx := context.Background()
	const (
		where  = "suburb = 'suburb_0032' AND occupation IN ('student', 'retired')"
		byOcc  = "SELECT occupation, SUM(income) FROM people WHERE " + where + " GROUP BY occupation"
		margin = "SELECT SUM(income) FROM people WHERE " + where
		apart  = "SELECT SUM(income) FROM people WHERE suburb = 'suburb_0032' AND occupation = 'retired'"
	)
	for _, tc := range []struct {
		secondary bool
		retired   string // the retired's sum in the GROUP BY ("" withheld)
	}{
		{true, ""},
		{false, "874000"},
	} {
		q := sumEngine(t, "suppress", fmt.Sprintf("threshold: 10, secondary_suppression: %t", tc.secondary))
		rows, err := q.Query(ctx, byOcc)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rows.Values {
			got[r[0]] = r[1]
		}
		if got["student"] != "" || got["retired"] != tc.retired {
			t.Errorf("secondary %t: students %q, retired %q; want the students withheld, the retired %q", tc.secondary, got["student"], got["retired"], tc.retired)
		}
		total, wm, err := attacks.SumAnswer(ctx, q, margin)
		if err != nil {
			t.Fatal(err)
		}
		retired, wr, err := attacks.SumAnswer(ctx, q, apart)
		if err != nil {
			t.Fatal(err)
		}
		if wm || wr || total-retired != 17400 {
			t.Errorf("secondary %t: margin %v (withheld %v) less the retired %v (withheld %v): want 891400 - 874000 = 17400", tc.secondary, total, wm, retired, wr)
		}
	}
}

// sumCase is what one sum attack under one mechanism must show.
type sumCase struct {
	attack *attacks.Attack
	mech   string
	check  func(t *testing.T, res *attacks.Result)
}

// The sum attacks through the Engine under every mechanism, on the demo
// table with the demo's targets, seeded: what each recovers and with how
// many queries. laplace stops the repeated ones at its cap (10 answers at
// 0.1), nothing exact; idp and bdp refuse the first SUM.
func TestSumAttacksUnderEveryMechanism(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sum attacks under eight mechanisms on 20,000 people: skipped under -short; go test ./... runs it")
	}
	params := map[string]string{"suppress": "threshold: 10", "bounded": "range: 2", "cellkey": "ptable: uniform, D: 2, suppress_at: 4"}
	// bounded's noise on a sum is uniform on [-r B, r B], B = 500,000:
	// sd 2 x 500,000 / sqrt(3).
	const boundedSD = 1e6 / 1.7320508075688772
	var cases []sumCase
	for _, a := range []*attacks.Attack{attacks.SumDifferencing, attacks.SumAveraging, attacks.SumSplitAveraging} {
		cases = append(cases, sumCase{a, "laplace", capped}, sumCase{a, "gaussian", noisy})
	}
	for _, m := range []string{"idp", "bdp"} {
		for _, a := range []*attacks.Attack{attacks.SumDifferencing, attacks.SumAveraging, attacks.SumSplitAveraging} {
			cases = append(cases, sumCase{a, m, refusedFirst})
		}
	}
	cases = append(cases,
		sumCase{attacks.SumDifferencing, "suppress", func(t *testing.T, r *attacks.Result) {
			wantSum(t, r, *r.Exact && r.Details["cell_withheld"] == true && r.Queries == 3, "the withheld 17,400 exactly in 3 queries")
		}},
		sumCase{attacks.SumAveraging, "suppress", func(t *testing.T, r *attacks.Result) {
			wantSum(t, r, *r.Exact && r.Queries == 30 && r.Details["standard_error"] == 0.0, "the published sum, exact, 30 equal answers")
		}},
		sumCase{attacks.SumDifferencing, "bounded", func(t *testing.T, r *attacks.Result) {
			// two fresh draws, each within r B = 1,000,000
			wantSum(t, r, !*r.Exact && r.Details["cell_withheld"] == false && math.Abs(r.Details["error"].(float64)) <= 2e6, "an error within 2,000,000")
		}},
		sumCase{attacks.SumAveraging, "bounded", func(t *testing.T, r *attacks.Result) {
			se, want := r.Details["standard_error"].(float64), boundedSD/math.Sqrt(200)
			wantSum(t, r, r.Queries == 200 && se > 0.8*want && se < 1.2*want && math.Abs(r.Details["error"].(float64)) < 4*se,
				fmt.Sprintf("200 answers, standard error near %.0f, the error within 4 of them", want))
		}},
		sumCase{attacks.SumSplitAveraging, "bounded", func(t *testing.T, r *attacks.Result) {
			// 20 pair sums of two fresh draws each: a standard error of
			// sqrt(2) sd / sqrt(20)
			wantSum(t, r, r.Queries == 40 && math.Abs(r.Details["error"].(float64)) < 4*math.Sqrt2*boundedSD/math.Sqrt(20), "40 queries, the error within 4 standard errors")
		}},
		sumCase{attacks.SumAveraging, "cellkey", stickyRepeat},
		sumCase{attacks.SumAveraging, "layered", stickyRepeat},
		sumCase{attacks.SumSplitAveraging, "layered", func(t *testing.T, r *attacks.Result) {
			wantSum(t, r, r.Queries == 40 && sameForms(r), "40 queries, the rewrite answered as the original (one condition after normalisation)")
		}},
	)
	for _, tc := range cases {
		t.Run(tc.attack.Name+"/"+tc.mech, func(t *testing.T) {
			o := tc.attack.Demo()
			o.Background = demoPeople(t)
			switch p := o.Params.(type) {
			case *attacks.SumAveragingParams:
				p.Limit = 200
			case *attacks.SplitParams:
				p.Splits = 10
			}
			res, err := attacks.Execute(context.Background(), tc.attack, sumEngine(t, tc.mech, params[tc.mech]), o, demoPeople(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d queries, %d refused, undecided %v, recovered %d (truth %v), error %v: %s", res.Queries, res.Refused, res.Undecided,
				res.Recovered, deref(res.Truth), res.Details["error"], res.Note)
			if res.Truth == nil {
				t.Error("not scored")
			}
			tc.check(t, res)
		})
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func wantSum(t *testing.T, r *attacks.Result, ok bool, want string) {
	t.Helper()
	if !ok || r.Undecided || r.Refused != 0 {
		t.Errorf("%d queries, %d refused, recovered %d, error %v, details %v: want %s", r.Queries, r.Refused, r.Recovered, r.Details["error"], r.Details, want)
	}
}

// capped: at most the cap's 10 answers, and nothing exact.
func capped(t *testing.T, r *attacks.Result) {
	if answers := r.Queries - r.Refused; answers > 10 || r.Exact != nil && *r.Exact {
		t.Errorf("%d answers, exact %v: want at most the cap's 10 and nothing exact", answers, *r.Exact)
	}
	if r.Undecided && (r.Refused == 0 || !strings.HasPrefix(r.Note, "stopped")) {
		t.Errorf("no verdict without a refusal: %q", r.Note)
	}
}

// noisy: gaussian composes under zCDP, so its cap of 1 lets more answers
// through (80 of sum-averaging's); none of them is exact, and a run it
// stops is stopped at the cap.
func noisy(t *testing.T, r *attacks.Result) {
	if r.Exact == nil || *r.Exact || r.Undecided || r.Refused > 0 && r.Details["refused"] != nil && r.Details["refused"] != "53400" {
		t.Errorf("exact %v, undecided %v, refused %v: want nothing exact and only the cap's refusal", r.Exact != nil && *r.Exact, r.Undecided, r.Details["refused"])
	}
}

// refusedFirst: the first SUM refused, no verdict, the refusal said.
func refusedFirst(t *testing.T, r *attacks.Result) {
	if !r.Undecided || r.Queries != 1 || r.Refused != 1 || r.Details["refused"] != "0A000" || !strings.HasPrefix(r.Note, "stopped: refused") {
		t.Errorf("%d queries, %d refused, undecided %v, note %q: want the first refused (0A000), no verdict", r.Queries, r.Refused, r.Undecided, r.Note)
	}
}

// stickyRepeat: 30 equal answers (standard error 0) keep their error.
func stickyRepeat(t *testing.T, r *attacks.Result) {
	wantSum(t, r, r.Queries == 30 && r.Details["standard_error"] == 0.0 && !*r.Exact, "30 equal answers, the noise kept")
}

// sameForms: every form of the target gave the same sums.
func sameForms(r *attacks.Result) bool {
	forms, ok := r.Details["forms"].([]attacks.SplitForm)
	if !ok || len(forms) < 2 {
		return false
	}
	for _, f := range forms[1:] {
		if fmt.Sprint(f.Sums) != fmt.Sprint(forms[0].Sums) {
			return false
		}
	}
	return true
}

// linear-reconstruction --sum hours through the Engine: the 153 people of
// suburb_0018 (128 incomes, which single out all but a few), 4 subset sums
// per person. Guessing everyone the group's median (33 hours) is off by
// 11.6 hours on average; bounded's noise (sd 114) and layered's (about
// 90, the attacker's residual) leave 6 to 7, cellkey's (about 6) under 1,
// and laplace's cap, after 10 answers, more than the guess.
func TestLinearReconstructionOfASumThroughTheEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("612 subset sums under four mechanisms: skipped under -short; go test ./... runs it")
	}
	const guess = 11.65 // mean absolute error of guessing the median
	for _, tc := range []struct {
		mech, params string
		lo, hi       float64 // mean absolute error in hours
		answers      int
	}{
		{"exact", "", 0, 0, 612},
		{"bounded", "range: 2", 4, 10, 612},
		{"layered", "", 4, 10, 612},
		{"cellkey", "ptable: uniform, D: 2, suppress_at: 4", 0, 1, 612},
		{"laplace", "", guess, 100, 10},
	} {
		o := attacks.LinearReconstruction.Demo()
		o.Background, o.Target.Sum = demoPeople(t), "hours"
		p := o.Params.(*attacks.LinearParams)
		p.Min, p.Max, p.Grain = 1, 99, 1
		res, err := attacks.Execute(context.Background(), attacks.LinearReconstruction, sumEngine(t, tc.mech, tc.params), o, demoPeople(t))
		if err != nil {
			t.Fatalf("%s: %v", tc.mech, err)
		}
		mae := res.Details["mean_abs_error"].(float64)
		t.Logf("%s: %d queries, %d refused: %d of %d values, mean abs error %.2f, residual rms %.1f", tc.mech, res.Queries, res.Refused,
			*res.CellsExact, res.CellsTotal, mae, res.Details["residual_rms"])
		if res.CellsTotal != 128 || res.Queries-res.Refused != tc.answers || mae < tc.lo || mae > tc.hi {
			t.Errorf("%s: %d of %d values from %d answers, mean abs error %.2f; want 128 values from %d, error in [%g, %g]",
				tc.mech, *res.CellsExact, res.CellsTotal, res.Queries-res.Refused, mae, tc.answers, tc.lo, tc.hi)
		}
	}
}

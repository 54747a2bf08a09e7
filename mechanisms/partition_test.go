package mechanisms

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"countwall/ir"
	"countwall/pgerror"
)

// suburbTable is a table whose suburb column has no declared domain and
// whose sex column has one.
func suburbTable() *ir.Table {
	return &ir.Table{Name: "people", PrivacyUnit: "id", Columns: map[string]*ir.Column{
		"suburb": {Name: "suburb", Type: ir.TypeText},
		"sex":    {Name: "sex", Type: ir.TypeText, Domain: &ir.Domain{Categories: []string{"F", "M"}}},
	}}
}

// selectionRequest is a GROUP BY over col at the share (eps, delta), priced
// with bounds G = l0, C = 1, and cells with the given distinct units (one
// row each).
func selectionRequest(col string, eps, delta float64, l0 int64, units ...int64) *Request {
	q := &ir.Query{Table: "people", GroupBy: []string{col}}
	bounds := ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: l0}
	cells := make([]ir.Cell, len(units))
	for i, u := range units {
		cells[i] = ir.Cell{Count: u, Units: u, InDomain: true}
	}
	return &Request{Query: q, Table: suburbTable(), Bounds: bounds, Epsilon: eps, Delta: delta,
		Result: &ir.Result{Cells: cells, Bounds: bounds, DomainComplete: col != "suburb"}}
}

func TestPartitionSelectionCharges(t *testing.T) {
	sigma := func(eps, delta float64) float64 {
		s, err := GaussianSigma(1, 1, eps, delta)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name      string
		mechanism string
		params    Params
		col       string
		eps, dlt  float64
		want      Charge
		code      pgerror.Code
	}{
		{name: "laplace, declared domain: epsilon only", mechanism: "laplace", col: "sex", eps: 1, dlt: 1e-5,
			want: Charge{Kind: AccountingDP, Epsilon: 1}},
		{name: "laplace, undeclared: epsilon and all of delta", mechanism: "laplace", col: "suburb", eps: 1, dlt: 1e-5,
			want: Charge{Kind: AccountingDP, Epsilon: 1, Delta: 1e-5}},
		{name: "laplace, delta_share 0.5", mechanism: "laplace", col: "suburb", eps: 1, dlt: 1e-5,
			params: Params{"partition_selection": map[string]any{"delta_share": 0.5}},
			want:   Charge{Kind: AccountingDP, Epsilon: 1, Delta: 5e-6}},
		{name: "laplace, undeclared at delta 0", mechanism: "laplace", col: "suburb", eps: 1, dlt: 0, code: pgerror.InvalidParameterValue},
		{name: "laplace, selection off", mechanism: "laplace", col: "suburb", eps: 1, dlt: 1e-5,
			params: Params{"partition_selection": map[string]any{"enabled": false}}, code: pgerror.FeatureNotSupported},
		{name: "gaussian, declared domain: rho only", mechanism: "gaussian", col: "sex", eps: 1, dlt: 1e-5,
			want: Charge{Kind: AccountingDP, Rho: GaussianRho(1, 1, sigma(1, 1e-5))}},
		{name: "gaussian, undeclared: rho at half the share, the selection's half pure", mechanism: "gaussian", col: "suburb", eps: 1, dlt: 1e-5,
			want: Charge{Kind: AccountingDP, Rho: GaussianRho(1, 1, sigma(0.5, 5e-6)), Epsilon: 0.5, Delta: 5e-6}},
		{name: "gaussian, epsilon_share 0.25", mechanism: "gaussian", col: "suburb", eps: 1, dlt: 1e-5,
			params: Params{"partition_selection": map[string]any{"epsilon_share": 0.25}},
			want:   Charge{Kind: AccountingDP, Rho: GaussianRho(1, 1, sigma(0.75, 5e-6)), Epsilon: 0.25, Delta: 5e-6}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMechanismForTest(t, tc.mechanism, tc.params, 1)
			req := selectionRequest(tc.col, tc.eps, tc.dlt, 1, 40, 50)
			priced, err := Price(m, req)
			if tc.code != "" {
				wantPlannerError(t, err, tc.code)
				_, _, err = m.Answer(context.Background(), req)
				wantPlannerError(t, err, tc.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if priced != tc.want {
				t.Fatalf("priced %+v, want %+v", priced, tc.want)
			}
			_, answered, err := m.Answer(context.Background(), req)
			if err != nil || answered != priced {
				t.Fatalf("answered with charge %+v (%v), priced %+v", answered, err, priced)
			}
		})
	}
}

func TestPartitionSelectionParams(t *testing.T) {
	for _, tc := range []struct {
		mechanism string
		params    map[string]any
		bad       string // a fragment of the error; "" when accepted
	}{
		{"laplace", map[string]any{"epsilon_share": 0.3, "delta_share": 1}, ""},
		{"laplace", map[string]any{"epsilon_share": 0}, "partition_selection.epsilon_share"},
		{"laplace", map[string]any{"epsilon_share": 1}, "partition_selection.epsilon_share"},
		{"gaussian", map[string]any{"delta_share": 1}, "partition_selection.delta_share"},
		{"gaussian", map[string]any{"delta_share": 0.9}, ""},
		{"gaussian", map[string]any{"delta": 0.9}, "delta"},
	} {
		_, err := New(tc.mechanism, Params{"partition_selection": tc.params}, Env{Seed: 1})
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s %v: %v", tc.mechanism, tc.params, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%s %v: error %v, want one naming %q", tc.mechanism, tc.params, err, tc.bad)
		}
	}
}

// fixedSelector keeps the groups of at least min units and records what
// it was asked.
type fixedSelector struct {
	min   int64
	mu    sync.Mutex
	calls [][2]float64 // (epsilon, delta) of each call
	units []int64
}

func (f *fixedSelector) Keep(units, l0 int64, eps, delta float64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, [2]float64{eps, delta})
	f.units = append(f.units, units)
	return units >= f.min, nil
}

// TestPartitionSelectionDropsWhatItDoesNotKeep: each group's distinct units
// go to the selector at the selection's share; the groups it drops are
// dropped without a noise draw, the others are noised at the counts' share.
func TestPartitionSelectionDropsWhatItDoesNotKeep(t *testing.T) {
	for _, name := range []string{"laplace", "gaussian"} {
		m := newMechanismForTest(t, name, nil, 1)
		sel := &fixedSelector{min: 3}
		rec := &recordingNoise{}
		switch m := m.(type) {
		case *laplace:
			m.noise, m.selection.selector = rec, sel
		case *gaussian:
			m.noise, m.selection.selector = rec, sel
		}
		req := selectionRequest("suburb", 1, 1e-5, 1, 1, 5, 2, 3)
		req.Result.Cells[1].Count = 9 // 5 units with 9 rows: units decide, not rows
		answers, _, err := m.Answer(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		want := []Answer{{Dropped: true}, {Int: 9}, {Dropped: true}, {Int: 3}}
		for i := range want {
			if answers[i] != want[i] {
				t.Errorf("%s: cell %d answered %+v, want %+v", name, i, answers[i], want[i])
			}
		}
		selDelta := 1e-5
		if name == "gaussian" {
			selDelta = 5e-6
		}
		// The first call is Answer's check of the parameters on one unit.
		if got := sel.units[1:]; len(got) != 4 || got[0] != 1 || got[1] != 5 || got[2] != 2 || got[3] != 3 {
			t.Errorf("%s: selector asked about units %v", name, sel.units)
		}
		for _, c := range sel.calls {
			if c != [2]float64{0.5, selDelta} {
				t.Errorf("%s: selection at %v, want (0.5, %g)", name, c, selDelta)
			}
		}
		if len(rec.eps) != 2 || rec.eps[0] != 0.5 || rec.eps[1] != 0.5 {
			t.Errorf("%s: counts noised at epsilons %v, want two draws at 0.5", name, rec.eps)
		}
		// Units not counted for a GROUP BY that selects: an internal error,
		// never a guess.
		req = selectionRequest("suburb", 1, 1e-5, 1, 4)
		req.Result.Cells[0].Units = 0
		_, _, err = m.Answer(context.Background(), req)
		wantPlannerError(t, err, pgerror.InternalError)
	}
}

// selectionDraws and selectionAlpha size the statistical tests of the
// library's selection: 20,000 decisions per group size, each probability
// bounded by Clopper-Pearson at alpha 1e-7 one-sided. With at most 12
// bounds per test the false-failure rate is below 1.2e-6.
const (
	selectionDraws = 20000
	selectionAlpha = 1e-7
)

func keepRate(t *testing.T, units, l0 int64, eps, delta float64) int {
	t.Helper()
	sel := LibrarySelection()
	kept := 0
	for range selectionDraws {
		k, err := sel.Keep(units, l0, eps, delta)
		if err != nil {
			t.Fatal(err)
		}
		if k {
			kept++
		}
	}
	return kept
}

func betweenBounds(k, n int) (lo, hi float64) {
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(selectionAlpha)
	}
	hi = 1
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - selectionAlpha)
	}
	return lo, hi
}

// TestLibrarySelectionIsDP measures the library's decisions at a delta
// generous enough to see (0.05, epsilon 0.5, l0 = 1): a group of one unit
// is kept with probability at most delta, a group of none never, and for
// each size n the probability of keeping n+1 units is at most
// e^epsilon times that of n, plus delta; from the hard threshold on, every
// group is kept. With G = 5 (Gaussian thresholding) a group of one unit is
// kept with probability at most delta/2.
func TestLibrarySelectionIsDP(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: the selection's keep rates over many draws: skipped under -short; go test ./... runs it")
	}
	const eps, delta = 0.5, 0.05
	if k := keepRate(t, 0, 1, eps, delta); k != 0 {
		t.Fatalf("a group of no units was kept %d times", k)
	}
	hard, err := SelectionHardThreshold(1, eps, delta)
	if err != nil || hard < 2 {
		t.Fatalf("hard threshold %d, %v", hard, err)
	}
	rates := map[int64]int{}
	for n := int64(1); n <= 4; n++ {
		rates[n] = keepRate(t, n, 1, eps, delta)
	}
	if lo, _ := betweenBounds(rates[1], selectionDraws); lo > delta || rates[1] == 0 {
		t.Errorf("a group of one unit kept %d of %d times: lower bound %g > delta %g (or never)", rates[1], selectionDraws, lo, delta)
	}
	for n := int64(1); n < 4; n++ {
		lo, _ := betweenBounds(rates[n+1], selectionDraws)
		_, hi := betweenBounds(rates[n], selectionDraws)
		if lo > math.Exp(eps)*hi+delta {
			t.Errorf("kept %d units %d times and %d units %d times: %g > e^%g * %g + %g", n+1, rates[n+1], n, rates[n], lo, eps, hi, delta)
		}
	}
	if k := keepRate(t, int64(hard), 1, eps, delta); k != selectionDraws {
		t.Errorf("a group at the hard threshold %d was kept %d of %d times", hard, k, selectionDraws)
	}
	// G = 5: the library thresholds a Gaussian count, and a group of one
	// unit is kept with probability at most delta/2.
	if k := keepRate(t, 1, 5, eps, delta); func() bool { lo, _ := betweenBounds(k, selectionDraws); return lo > delta/2 }() {
		t.Errorf("G = 5: a group of one unit kept %d of %d times, more than delta/2 = %g", k, selectionDraws, delta/2)
	}
	if h, err := SelectionHardThreshold(5, eps, delta); h != 0 || err != nil {
		t.Errorf("G = 5: hard threshold %d, %v; the Gaussian thresholding has none", h, err)
	}
}

package mechanisms

import (
	"context"
	"math"
	"testing"

	"countwall/ir"
)

// recordingNoise records the sensitivities each draw is asked for and adds
// no noise.
type recordingNoise struct {
	l0, lInf []int64
	eps      []float64
}

func (r *recordingNoise) AddLaplace(v, l0, lInf int64, eps float64) (int64, error) {
	if err := checkLaplace(l0, lInf, eps); err != nil {
		return 0, err
	}
	r.l0, r.lInf, r.eps = append(r.l0, l0), append(r.lInf, lInf), append(r.eps, eps)
	return v, nil
}

func (r *recordingNoise) AddGaussian(v, l0, lInf int64, eps, delta float64) (int64, error) {
	if _, err := GaussianSigma(l0, lInf, eps, delta); err != nil {
		return 0, err
	}
	r.l0, r.lInf, r.eps = append(r.l0, l0), append(r.lInf, lInf), append(r.eps, eps)
	return v, nil
}

func (r *recordingNoise) AddLaplaceFloat(v, s, eps float64) (float64, error) { return v, nil }

func (r *recordingNoise) AddGaussianFloat(v float64, l0 int64, lInf, eps, delta float64) (float64, error) {
	return v, nil
}

// TestDPCountCalibratesToTheBounds: for the bounds a unit with r rows is
// counted under (C rows per cell, G cells), every cell's noise is drawn for
// l0 = G and lInf = C, so the Laplace scale is G*C/epsilon and the Gaussian
// sigma the one for L2 = sqrt(G)*C, and the query is charged epsilon (and
// delta) once, whatever r is.
func TestDPCountCalibratesToTheBounds(t *testing.T) {
	grouped := groupedCountQuery(nil)
	cases := []struct {
		name   string
		bounds ir.Bounds
	}{
		{"r=1: one row, one cell", ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}},
		{"r=5 rows in one cell, C=5", ir.Bounds{MaxRowsPerUnit: 5, MaxGroupsPerUnit: 1}},
		{"r=5 cells, G=5", ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 5}},
		{"r=50 cells and rows, C=50, G=50", ir.Bounds{MaxRowsPerUnit: 50, MaxGroupsPerUnit: 50}},
	}
	for _, name := range []string{"laplace", "gaussian"} {
		for _, tc := range cases {
			m := newMechanismForTest(t, name, nil, 1)
			rec := &recordingNoise{}
			switch m := m.(type) {
			case *laplace:
				m.noise = rec
			case *gaussian:
				m.noise = rec
			}
			req := dpRequest(grouped, 0.5, 1e-6, true, 3, 0, 9)
			req.Result.Bounds = tc.bounds
			answers, charge, err := m.Answer(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.l0) != 3 {
				t.Fatalf("%s %s: %d draws for 3 cells", name, tc.name, len(rec.l0))
			}
			for i := range rec.l0 {
				if rec.l0[i] != tc.bounds.MaxGroupsPerUnit || rec.lInf[i] != tc.bounds.MaxRowsPerUnit || rec.eps[i] != 0.5 {
					t.Errorf("%s %s: draw %d for l0 %d, lInf %d, epsilon %g", name, tc.name, i, rec.l0[i], rec.lInf[i], rec.eps[i])
				}
			}
			if answers[0].Int != 3 || answers[2].Int != 9 {
				t.Errorf("%s %s: answers %+v", name, tc.name, answers)
			}
			want := Charge{Kind: AccountingDP, Epsilon: 0.5}
			if name == "gaussian" {
				// rho = Delta2^2/(2 sigma^2) with Delta2^2 = G*C^2 and sigma
				// calibrated to the same Delta2: the same rho for any bounds.
				sigma, _ := GaussianSigma(tc.bounds.MaxGroupsPerUnit, tc.bounds.MaxRowsPerUnit, 0.5, 1e-6)
				g, c := float64(tc.bounds.MaxGroupsPerUnit), float64(tc.bounds.MaxRowsPerUnit)
				want = Charge{Kind: AccountingDP, Rho: g * c * c / (2 * sigma * sigma)}
				if s11, _ := GaussianSigma(1, 1, 0.5, 1e-6); math.Abs(charge.Rho-1/(2*s11*s11)) > 1e-3*charge.Rho {
					t.Errorf("%s: rho %g depends on the bounds; want %g", tc.name, charge.Rho, 1/(2*s11*s11))
				}
			}
			if charge.Kind != want.Kind || charge.Epsilon != want.Epsilon || charge.Delta != want.Delta || math.Abs(charge.Rho-want.Rho) > 1e-12 {
				t.Errorf("%s %s: charge %+v, want %+v", name, tc.name, charge, want)
			}
		}
	}
	// The stated scales: Laplace G*C/epsilon; Gaussian sigma grows as
	// sqrt(G)*C (the library's calibration is tight to 0.1%).
	s11, _ := GaussianSigma(1, 1, 0.5, 1e-6)
	s43, _ := GaussianSigma(4, 3, 0.5, 1e-6)
	if r := s43 / s11; math.Abs(r-6) > 0.01 {
		t.Errorf("sigma(G=4, C=3)/sigma(1, 1) = %g, want sqrt(4)*3 = 6", r)
	}
}

// TestDPCountRefusesUnboundedCounts: cells counted without bounds are not
// noised as if they had been.
func TestDPCountRefusesUnboundedCounts(t *testing.T) {
	for _, name := range []string{"laplace", "gaussian"} {
		m := newMechanismForTest(t, name, nil, 1)
		req := dpRequest(&ir.Query{Table: "people"}, 0.5, 1e-6, true, 3)
		req.Result.Bounds = ir.Bounds{}
		if _, charge, err := m.Answer(context.Background(), req); err == nil || charge != (Charge{}) {
			t.Errorf("%s answered unbounded counts: %v, %+v", name, err, charge)
		}
	}
}

// TestDPCountBoundsParams: the mechanism's own bounds override the table's
// through Needs; bad values name the parameter.
func TestDPCountBoundsParams(t *testing.T) {
	m := newMechanismForTest(t, "laplace", Params{"max_rows_per_unit": 4, "max_groups_per_unit": 2}, 1)
	if got, want := m.Needs(), (ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 4, MaxGroupsPerUnit: 2}}); got != want {
		t.Errorf("needs %+v, want %+v", got, want)
	}
	for _, p := range []Params{{"max_rows_per_unit": 0}, {"max_groups_per_unit": 1.5}, {"max_groups_per_unit": "x"}} {
		if _, err := New("gaussian", p, Env{Seed: 1}); err == nil {
			t.Errorf("accepted %v", p)
		}
	}
}

package mechanisms

import (
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"

	"countwall/ir"
)

// keyedSumCell is a cell of count rows with contributor key key whose summed
// column has the given contributions.
func keyedSumCell(count int64, key uint32, contributions ...float64) ir.Cell {
	c := magCell("", count, 0, contributions...)
	c.Key = key
	return c
}

func TestCellKeySumsSticky(t *testing.T) {
	m := newMechanismForTest(t, "cellkey", nil, 0)
	cell := keyedSumCell(40, 0xdeadbeef, 500, 300, 200, 100, 50)
	// The same contributors asked through two different statements: the
	// planner gives the same cell, and the answer is the same.
	where := sumQuery()
	where.Where = &ir.Compare{Column: "age", Op: ">", Value: ir.Literal{Kind: ir.LitInt, Int: 30}}
	a := answerWithoutCharge(t, m, sumsRequest(sumQuery(), cell))
	b := answerWithoutCharge(t, m, sumsRequest(where, cell))
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same contributors, different answers: %+v and %+v", a[0].Sums, b[0].Sums)
	}
	again := answerWithoutCharge(t, newMechanismForTest(t, "cellkey", nil, 0), sumsRequest(sumQuery(), cell))
	if !reflect.DeepEqual(a, again) {
		t.Error("a new firewall answers the same contributors differently")
	}
	// Other contributors (another key) are perturbed independently: over
	// 50 keys the answers are not all the same.
	seen := map[float64]bool{}
	for k := range uint32(50) {
		c := keyedSumCell(40, k*0x01000193, 500, 300, 200, 100, 50)
		seen[answerWithoutCharge(t, m, sumsRequest(sumQuery(), c))[0].Sums.Columns[0].Float] = true
	}
	if len(seen) < 25 {
		t.Errorf("50 keys gave %d distinct sums", len(seen))
	}
}

// TestCellKeySumsBounded checks the perturbation against its definition on
// 20,000 random keys: never beyond sum eps_i * m% * x_i * (D + mu) (a bound,
// so no false failures), mean within 5 standard errors of 0 and the
// table's variance (before mu) within 7.5 standard errors of V (false
// failure below 1e-6 each; the keys are seeded, so the run is
// reproducible).
func TestCellKeySumsBounded(t *testing.T) {
	m := newMechanismForTest(t, "cellkey", Params{"magnitude_mu": 0.5, "suppress_at": 0}, 0).(*cellKey)
	contr := []float64{1000, 400, 100, 80, 20}
	limit := (1000*1 + 400*0.5 + 100*0.25) * 0.10 * (2 + 0.5)
	r := rand.New(rand.NewPCG(35, 1))
	const n = 20000
	var sum, sum2, vs2 float64
	for range n {
		key := r.Uint32()
		cell := keyedSumCell(40, key, contr...)
		got := answerWithoutCharge(t, m, sumsRequest(sumQuery(), cell))[0].Sums.Columns[0].Float
		noise := got - 1600
		if math.Abs(noise) > limit+1e-9 {
			t.Fatalf("key %d: noise %g beyond %g", key, noise, limit)
		}
		sum += noise
		sum2 += noise * noise
		v := m.magnitude.value(r.Float64())
		if math.Abs(v) < 0.5 {
			t.Fatalf("value %g: mu = 0.5 did not move it away from 0", v)
		}
		vs2 += (math.Abs(v) - 0.5) * (math.Abs(v) - 0.5)
	}
	mean := sum / n
	sd := math.Sqrt(sum2/n - mean*mean)
	if math.Abs(mean) > 5*sd/math.Sqrt(n) {
		t.Errorf("mean noise %g, more than 5 standard errors from 0 (sd %g)", mean, sd)
	}
	if v := vs2 / n; math.Abs(v-1) > 5*math.Sqrt(2.0/n)*1.5 {
		t.Errorf("table variance %g, want 1", v)
	}
}

func TestCellKeySumsAvgAndSuppression(t *testing.T) {
	m := newMechanismForTest(t, "cellkey", nil, 0).(*cellKey)
	cell := keyedSumCell(40, 12345, 500, 300, 200)
	cell.Sums[0].Int = big.NewInt(1000)
	got := answerWithoutCharge(t, m, sumsRequest(sumQuery(), cell))[0]
	s := got.Sums.Columns[0]
	if s.N != got.Int {
		t.Errorf("AVG divides by %d values, the published count is %d", s.N, got.Int)
	}
	if want := roundedBig(1000 + m.magnitudeNoise(cell.Sums[0], 12345)); s.Int.Cmp(want) != 0 {
		t.Errorf("integer sum %s, want %s", s.Int, want)
	}
	small := keyedSumCell(4, 99, 1, 1, 1, 1)
	if a := answerWithoutCharge(t, m, sumsRequest(sumQuery(), small))[0]; !a.Suppressed || a.Sums != nil {
		t.Errorf("a count of 4 published %+v", a)
	}
	// Bounds keep a perturbed sum within what its values could sum to.
	bounds := ir.ValueBounds{Min: 0, Max: 1000}
	req := sumsRequest(sumQuery(), keyedSumCell(40, 7, 1000, 0))
	req.Table = &ir.Table{Name: "t", Columns: map[string]*ir.Column{"v": {Name: "v", Type: ir.TypeReal, Bounds: &bounds}}}
	for key := range uint32(200) {
		req.Result.Cells[0].Key = key * 0x9e3779b9
		a := answerWithoutCharge(t, m, req)[0]
		if f := a.Sums.Columns[0].Float; f < 0 || f > 1000*float64(a.Sums.Columns[0].N) {
			t.Fatalf("key %d: sum %g outside the bounds of %d values", key, f, a.Sums.Columns[0].N)
		}
	}
}

func TestMagnitudeTableParams(t *testing.T) {
	for _, p := range []Params{{"magnitude_V": 2}, {"magnitude_V": 0}, {"magnitude_top_k": 0}, {"magnitude_percent": -1}} {
		if _, err := New("cellkey", p, Env{}); err == nil {
			t.Errorf("%v accepted", p)
		}
	}
}

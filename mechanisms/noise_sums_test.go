package mechanisms

import (
	"math"
	"reflect"
	"testing"

	"countwall/ir"
)

// boundedTable is a table whose summed column v lies in [-50, 200].
func boundedTable() *ir.Table {
	b := ir.ValueBounds{Min: -50, Max: 200}
	return &ir.Table{Name: "t", Columns: map[string]*ir.Column{"v": {Name: "v", Type: ir.TypeReal, Bounds: &b}}}
}

// TestBoundedSums draws 4,000 answers for one cell (seeded): every sum
// within r*B = 2*200 of the truth (a bound: no false failure), the mean
// within 5 standard errors of the truth and the SD within 10% of
// r*B/sqrt(3), about 7 standard errors (false failures below 1e-6), the
// count of values within r of the truth.
func TestBoundedSums(t *testing.T) {
	m := newMechanismForTest(t, "bounded", nil, 35)
	cell := magCell("", 100, 0, 3000, 2000)
	cell.Sums[0].N = 90 // ten NULL values: counted apart from the rows
	req := sumsRequest(sumQuery(), cell)
	req.Table = boundedTable()
	const n = 4000
	var sum, sum2 float64
	for range n {
		a := answerWithoutCharge(t, m, req)[0]
		s := a.Sums.Columns[0]
		d := s.Float - 5000
		if math.Abs(d) > 400 || s.N < 88 || s.N > 92 {
			t.Fatalf("sum %g of %d values beyond the range", s.Float, s.N)
		}
		sum += d
		sum2 += d * d
	}
	mean := sum / n
	sd := math.Sqrt(sum2/n - mean*mean)
	want := 400 / math.Sqrt(3)
	if math.Abs(mean) > 5*want/math.Sqrt(n) || math.Abs(sd-want) > 0.1*want {
		t.Errorf("noise mean %g, SD %g; want 0 and %g", mean, sd, want)
	}
}

func TestBoundedSumsSuppressed(t *testing.T) {
	m := newMechanismForTest(t, "bounded", Params{"suppress_at": 5}, 35)
	req := sumsRequest(sumQuery(), magCell("", 5, 0, 1, 2, 3, 4, 5))
	req.Table = boundedTable()
	if a := answerWithoutCharge(t, m, req)[0]; !a.Suppressed || a.Sums != nil {
		t.Errorf("a count of 5 published %+v", a)
	}
}

// TestLayeredSums: Diffix's flattening makes an extreme value invisible
// (the same answer with the outlier at 10,000 or 1,000,000, for each of 2,000
// keys: exact), the answer is sticky, and the noise around the flattened
// sum (700) has mean within 5 standard errors of 0 and SD within 15% of
// the top group's average (100), about 9 standard errors (false failure
// below 1e-6).
func TestLayeredSums(t *testing.T) {
	m := newMechanismForTest(t, "layered", Params{"low_count_min_threshold": 0, "low_count_layer_sd": 0}, 35)
	const n = 2000
	var sum, sum2 float64
	for k := range uint32(n) {
		key := k * 0x9e3779b9
		small := keyedSumCell(7, key, 10000, 100, 100, 100, 100, 100, 100)
		big := keyedSumCell(7, key, 1000000, 100, 100, 100, 100, 100, 100)
		small.Units, big.Units = 7, 7
		a := answerWithoutCharge(t, m, sumsRequest(sumQuery(), small))[0]
		b := answerWithoutCharge(t, m, sumsRequest(sumQuery(), big))[0]
		if a.Sums.Columns[0].Float != b.Sums.Columns[0].Float {
			t.Fatalf("key %d: the outlier shows: %g and %g", key, a.Sums.Columns[0].Float, b.Sums.Columns[0].Float)
		}
		if again := answerWithoutCharge(t, m, sumsRequest(sumQuery(), small)); !reflect.DeepEqual(again[0], a) {
			t.Fatalf("key %d: asked again, answered differently", key)
		}
		d := a.Sums.Columns[0].Float - 700
		sum += d
		sum2 += d * d
	}
	mean := sum / n
	sd := math.Sqrt(sum2/n - mean*mean)
	if math.Abs(mean) > 5*100/math.Sqrt(n) || math.Abs(sd-100) > 15 {
		t.Errorf("noise mean %g, SD %g; want 0 and 100", mean, sd)
	}
}

func TestLayeredSumsWithheld(t *testing.T) {
	m := newMechanismForTest(t, "layered", nil, 35)
	cell := keyedSumCell(2, 5, 10, 20)
	cell.Units = 2
	if a := answerWithoutCharge(t, m, sumsRequest(sumQuery(), cell))[0]; !a.Suppressed || a.Sums != nil {
		t.Errorf("two people published %+v", a)
	}
}

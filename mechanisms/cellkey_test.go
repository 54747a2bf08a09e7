package mechanisms

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"countwall/ir"
)

// cellKeyAt is the cell key whose position key/2^32 is pos.
func cellKeyAt(pos float64) uint32 { return uint32(pos * (1 << 32)) }

// keyedCellsRequest is a request over cells with the given counts and keys.
func keyedCellsRequest(q *ir.Query, counts []int64, keys []uint32) *Request {
	cells := make([]ir.Cell, len(counts))
	for i := range counts {
		cells[i] = ir.Cell{Count: counts[i], Units: counts[i], Key: keys[i], InDomain: true}
	}
	return &Request{Query: q, Result: &ir.Result{Cells: cells}}
}

func TestCellKeyExactCases(t *testing.T) {
	sup := Answer{Suppressed: true}
	tests := []struct {
		name   string
		p      Params
		q      *ir.Query
		counts []int64
		pos    []float64
		want   []Answer
	}{
		// Default: uniform D=2, counts <= 4 suppressed. Rows for counts >= 2
		// split [0, 1) into fifths for noise -2, -1, 0, +1, +2.
		{"defaults: uniform D=2, s=4", nil, groupedCountQuery(nil),
			[]int64{0, 1, 4, 5, 5, 5, 5, 1000},
			[]float64{0.3, 0.3, 0.99, 0.1, 0.5, 0.95, 0.7, 0.3},
			[]Answer{sup, sup, sup, {Int: 3}, {Int: 5}, {Int: 7}, {Int: 6}, {Int: 999}}},
		{"no suppression: zeros stay zero and unmarked", Params{"suppress_at": -1}, groupedCountQuery(nil),
			[]int64{0, 0},
			[]float64{0, 0.99},
			[]Answer{{Int: 0}, {Int: 0}}},
		{"first and last key", Params{"suppress_at": -1}, groupedCountQuery(nil),
			[]int64{10, 10},
			[]float64{0, 1 - 1.0/(1<<32)},
			[]Answer{{Int: 8}, {Int: 12}}},
		// Uniform D=3 small rows: count 1 is uniform on -1..3 (fifths),
		// count 2 on -2..3 (sixths); counts >= 3 on -3..3.
		{"uniform small rows never go negative", Params{"D": 3, "suppress_at": -1}, groupedCountQuery(nil),
			[]int64{1, 1, 2, 2, 3},
			[]float64{0.1, 0.9, 0.1, 0.9, 0.01},
			[]Answer{{Int: 0}, {Int: 4}, {Int: 0}, {Int: 5}, {Int: 0}}},
		// abs_example rows: i=1 (-1 below .50833333, +1 below .98333333, +2),
		// i=2 (-2 below .16155827, 0 below .71720864, ...),
		// i=3 (-1 below .41231301, ...), i>=4 symmetric.
		{"abs_example rows", Params{"ptable": "abs_example", "suppress_at": -1}, groupedCountQuery(nil),
			[]int64{1, 1, 1, 2, 2, 3, 3, 4, 100, 100},
			[]float64{0.5, 0.51, 0.99, 0.1, 0.7, 0.4, 0.95, 0.05, 0.5, 0.99},
			[]Answer{{Int: 0}, {Int: 2}, {Int: 3}, {Int: 0}, {Int: 2}, {Int: 2}, {Int: 5}, {Int: 2}, {Int: 100}, {Int: 102}}},
		{"COUNT(DISTINCT unit)", nil, &ir.Query{Agg: ir.CountDistinct},
			[]int64{20}, []float64{0.9},
			[]Answer{{Int: 22}}},
		{"threshold: noisy 52 > 51", nil, &ir.Query{Threshold: &ir.Threshold{Bound: 51}},
			[]int64{50}, []float64{0.9},
			[]Answer{{Int: 1}}},
		{"threshold: noisy 52 is not > 52", nil, &ir.Query{Threshold: &ir.Threshold{Bound: 52}},
			[]int64{50}, []float64{0.9},
			[]Answer{{Int: 0}}},
		{"threshold: suppressed cell stays a suppressed 0", nil, groupedCountQuery(&ir.Threshold{Bound: 0}),
			[]int64{3, 0}, []float64{0.9, 0.9},
			[]Answer{sup, sup}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMechanismForTest(t, "cellkey", tt.p, 0)
			keys := make([]uint32, len(tt.pos))
			for i, p := range tt.pos {
				keys[i] = cellKeyAt(p)
			}
			got := answerWithoutCharge(t, m, keyedCellsRequest(tt.q, tt.counts, keys))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestCellKeyNeedsKey(t *testing.T) {
	// Contributions are computed for a query with sums only.
	if got := newMechanismForTest(t, "cellkey", nil, 0).Needs(); got != (ir.Needs{Key: true, Contributions: true}) {
		t.Errorf("Needs() = %+v, want the key (and contributions for sums) only", got)
	}
}

// The same (count, key) always gets the same answer: across repeated calls,
// across instances, whatever Env.Seed is.
func TestCellKeySticky(t *testing.T) {
	src := rand.New(rand.NewPCG(1, 2))
	counts := make([]int64, 500)
	keys := make([]uint32, 500)
	for i := range counts {
		counts[i] = 5 + src.Int64N(200)
		keys[i] = src.Uint32()
	}
	req := keyedCellsRequest(groupedCountQuery(nil), counts, keys)
	for _, p := range []Params{nil, {"ptable": "abs_example"}, {"D": 7}} {
		first := answerWithoutCharge(t, newMechanismForTest(t, "cellkey", p, 0), req)
		for seed := int64(1); seed <= 3; seed++ {
			m := newMechanismForTest(t, "cellkey", p, seed)
			for range 2 {
				if got := answerWithoutCharge(t, m, req); !reflect.DeepEqual(got, first) {
					t.Fatalf("params %v seed %d: answers changed between calls or instances", p, seed)
				}
			}
		}
	}
}

// Over every count 1..12 and 2,000 random keys each, the noise lies within
// -D..D and never makes a count negative (deterministic given the seed).
func TestCellKeyNoiseBounds(t *testing.T) {
	src := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		p Params
		d int64
	}{
		{Params{"D": 1, "suppress_at": -1}, 1},
		{Params{"D": 3, "suppress_at": -1}, 3},
		{Params{"ptable": "abs_example", "suppress_at": -1}, 2},
	} {
		m := newMechanismForTest(t, "cellkey", tc.p, 0)
		for count := int64(1); count <= 12; count++ {
			keys := make([]uint32, 2000)
			for i := range keys {
				keys[i] = src.Uint32()
			}
			answers := answerWithoutCharge(t, m, keyedCellsRequest(groupedCountQuery(nil), repeatedCounts(count, len(keys)), keys))
			for i, a := range answers {
				if v := a.Int - count; v < -tc.d || v > tc.d || a.Int < 0 || a.Suppressed || a.Dropped {
					t.Fatalf("%v count %d key %d: answer %+v (noise %d) outside -%d..%d or negative", tc.p, count, keys[i], a, v, tc.d, tc.d)
				}
			}
		}
	}
}

// Over 20,000 distinct cells with random keys (seeded), the noise of each
// row matches its table distribution by a chi-square test at alpha = 1e-4
// (see assertChiSquareFit): a correct implementation fails each test with
// probability 1e-4; with fixed seeds the outcome is reproducible. Keys stand
// in for sums of record keys, which are uniform on 2^32.
func TestCellKeyNoiseDistribution(t *testing.T) {
	const n = 20000
	tests := []struct {
		name   string
		p      Params
		count  int64
		values []int64
		probs  []float64
	}{
		{"uniform D=2, count 50", Params{"D": 2}, 50,
			[]int64{-2, -1, 0, 1, 2}, []float64{.2, .2, .2, .2, .2}},
		{"uniform D=3, count 1 (-1..3)", Params{"D": 3, "suppress_at": -1}, 1,
			[]int64{-1, 0, 1, 2, 3}, []float64{.2, .2, .2, .2, .2}},
		{"abs_example i=1", Params{"ptable": "abs_example", "suppress_at": -1}, 1,
			[]int64{-1, 1, 2}, []float64{.50833333, .475, .01666667}},
		{"abs_example i=2", Params{"ptable": "abs_example", "suppress_at": -1}, 2,
			[]int64{-2, 0, 1, 2}, []float64{.16155827, .55565037, .24246618, .04032518}},
		{"abs_example i=3", Params{"ptable": "abs_example", "suppress_at": -1}, 3,
			[]int64{-1, 0, 1, 2}, []float64{.41231301, .28806097, .18693903, .11268699}},
		{"abs_example i>=4 (count 50)", Params{"ptable": "abs_example"}, 50,
			[]int64{-2, -1, 0, 1, 2}, []float64{.07012498, .24450007, .37074990, .24450007, .07012498}},
	}
	for k, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := rand.New(rand.NewChaCha8([32]byte{byte(k), 'c', 'k'}))
			keys := make([]uint32, n)
			for i := range keys {
				keys[i] = src.Uint32()
			}
			m := newMechanismForTest(t, "cellkey", tt.p, 0)
			answers := answerWithoutCharge(t, m, keyedCellsRequest(groupedCountQuery(nil), repeatedCounts(tt.count, n), keys))
			observed := make([]float64, len(tt.values))
			for _, a := range answers {
				v := a.Int - tt.count
				idx := -1
				for j, want := range tt.values {
					if v == want {
						idx = j
					}
				}
				if idx < 0 {
					t.Fatalf("noise %d is not in the row's support %v", v, tt.values)
				}
				observed[idx]++
			}
			assertChiSquareFit(t, tt.name, observed, tt.probs, n)
		})
	}
}

// A CSV file with the abs_example table answers exactly as the built-in one.
func TestCellKeyCSVTableMatchesBuiltIn(t *testing.T) {
	src := rand.New(rand.NewPCG(5, 6))
	counts := make([]int64, 5000)
	keys := make([]uint32, 5000)
	for i := range counts {
		counts[i] = 1 + src.Int64N(8)
		keys[i] = src.Uint32()
	}
	req := keyedCellsRequest(groupedCountQuery(nil), counts, keys)
	builtIn := answerWithoutCharge(t, newMechanismForTest(t, "cellkey", Params{"ptable": "abs_example", "suppress_at": -1}, 0), req)
	fromCSV := answerWithoutCharge(t, newMechanismForTest(t, "cellkey", Params{"ptable": "testdata/ptable_abs_example.csv", "suppress_at": -1}, 0), req)
	for i := range builtIn {
		if builtIn[i] != fromCSV[i] {
			t.Fatalf("count %d key %d: built-in %+v, CSV %+v", counts[i], keys[i], builtIn[i], fromCSV[i])
		}
	}
}

func TestCellKeyDescribe(t *testing.T) {
	tests := []struct {
		p        Params
		contains string
		absent   []string
	}{
		{nil, "offers no formal privacy guarantee", []string{"D=", "uniform(", "+-"}},
		{Params{"publish_parameters": true}, "(table uniform(D=2), noise within +-2, counts <= 4 published as 0)", nil},
		{Params{"ptable": "abs_example", "suppress_at": -1, "publish_parameters": true}, "(table abs_example, noise within +-2)", nil},
		{Params{"ptable": "abs_example"}, "the same contributors always get the same answer", []string{"abs_example"}},
	}
	for _, tt := range tests {
		got := newMechanismForTest(t, "cellkey", tt.p, 0).(Describer).Describe()
		if !strings.HasPrefix(got, "cellkey: ") || !strings.Contains(got, tt.contains) {
			t.Errorf("%v: Describe() = %q, want it to contain %q", tt.p, got, tt.contains)
		}
		for _, a := range tt.absent {
			if strings.Contains(got, a) {
				t.Errorf("%v: Describe() = %q publishes %q without publish_parameters", tt.p, got, a)
			}
		}
	}
}

package risk

import (
	"math"
	"testing"
)

// TracingTest on two attributes: the marginals of 4 people with allele 1
// at the first attribute and none at the second, scored against the
// reference 00; T is the given threshold or, calibrated on the genomes
// after the reference (and the centre), the score just above the
// share 1 - fpr of them.
func TestTracingTest(t *testing.T) {
	above := func(x float64) float64 { return math.Nextafter(x, math.Inf(1)) }
	for _, tc := range []struct {
		genomes   []string
		centre    int
		threshold float64
		scores    map[string]float64
		T         float64
	}{
		// q^ = (1, -1): 10 scores 2 * 1, 01 scores 2 * -1.
		{[]string{"00", "00", "01", "11"}, 0, math.NaN(), map[string]float64{"10": 2, "01": -2, "11": 0, "00": 0}, above(0)},
		{[]string{"00", "00", "01", "11"}, 0, 1.5, map[string]float64{"10": 2}, 1.5},
		// Centred on 11: q^ - p^ = (0, -2).
		{[]string{"00", "11", "01", "10"}, 1, math.NaN(), map[string]float64{"10": 0, "01": -4, "11": -4}, above(-4)},
	} {
		score, T := TracingTest(tc.genomes, 4, tc.centre, 0.5, tc.threshold, []float64{4, 0})
		if T != tc.T {
			t.Errorf("%v centred on %d: T = %g, want %g", tc.genomes, tc.centre, T, tc.T)
		}
		for g, want := range tc.scores {
			if got := score(g); got != want {
				t.Errorf("%v centred on %d: score(%s) = %g, want %g", tc.genomes, tc.centre, g, got, want)
			}
		}
	}
}

// BeyondChance at the demo's figures: 85 of 100 members above T at a
// false-positive rate of 0.11 are far more than chance; 3 of 100 at 0.07
// are not; 12 of 100 at 0.05 are (P(X >= 12) = 0.0043), 10 are not (0.028).
func TestBeyondChance(t *testing.T) {
	for _, tc := range []struct {
		k, n int
		rate float64
		want bool
	}{
		{85, 100, 0.11, true}, {3, 100, 0.07, false}, {12, 100, 0.05, true}, {10, 100, 0.05, false}, {0, 100, 0.05, false}, {0, 0, 0.05, false},
	} {
		if got := BeyondChance(tc.k, tc.n, tc.rate); got != tc.want {
			t.Errorf("BeyondChance(%d, %d, %g) = %v, want %v", tc.k, tc.n, tc.rate, got, tc.want)
		}
	}
}

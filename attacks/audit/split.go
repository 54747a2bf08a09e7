package audit

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// The split estimator. A fixed decision rule (a count above the cell's
// midpoint) is far from the best event for a given mechanism: under Laplace
// noise at epsilon 1 it cannot show more than 0.83. The best event is the
// one where the two worlds' probabilities differ by the largest ratio, but
// choosing it from the same answers that bound it would overstate the loss.
// So, as DP-Sniper (Bichsel et al., S&P 2021) does, the event is chosen on
// the first half of the trials and bounded, with Clopper-Pearson, on the
// second half only.

// ClopperPearsonLower is the one-sided lower confidence bound, at
// confidence 1-alpha, on a rate observed as k events in n trials.
func ClopperPearsonLower(k, n int, alpha float64) float64 {
	if n <= 0 || k <= 0 {
		return 0
	}
	return distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha)
}

// scoreEvent is an event over a test's score: at least (or at most) t.
type scoreEvent struct {
	t     float64
	above bool
	// likelier is the world the event is likelier in.
	likelier World
}

func (e scoreEvent) holds(v float64) bool {
	if e.above {
		return v >= e.t
	}
	return v <= e.t
}

func (e scoreEvent) String() string {
	op := "<="
	if e.above {
		op = ">="
	}
	return fmt.Sprintf("score %s %g, likelier %s the person", op, e.t, e.likelier)
}

// count is how many of vs the event holds for.
func (e scoreEvent) count(vs []float64) int {
	n := 0
	for _, v := range vs {
		if e.holds(v) {
			n++
		}
	}
	return n
}

// chooseEvent picks, on the selection half, the event whose bound would be
// largest there: ln((P_likelier - delta) / P_other) with each rate at its
// Clopper-Pearson bound, which weighs a rare event's ratio by how little it
// can be trusted (a point estimate would pick a far tail seen a few times).
// Every value seen is a candidate threshold: the samples are sorted once,
// and each count's bounds computed once, so that thousands of distinct
// times cost little more than a few counts.
func chooseEvent(with, without []float64, delta, alpha float64) (scoreEvent, bool) {
	sorted := [2][]float64{slices.Sorted(slices.Values(without)), slices.Sorted(slices.Values(with))}
	values := slices.Compact(slices.Sorted(slices.Values(slices.Concat(with, without))))
	n := len(with)
	lower, upper := make([]float64, n+1), make([]float64, n+1)
	for k := range lower {
		lower[k], upper[k] = math.NaN(), math.NaN()
	}
	bound := func(k int, up bool) float64 {
		if up {
			if math.IsNaN(upper[k]) {
				upper[k] = ClopperPearsonUpper(k, n, alpha)
			}
			return upper[k]
		}
		if math.IsNaN(lower[k]) {
			lower[k] = ClopperPearsonLower(k, n, alpha)
		}
		return lower[k]
	}
	// count is how many of world w's samples the event holds for.
	count := func(w World, t float64, above bool) int {
		vs := sorted[w]
		if above {
			i, _ := slices.BinarySearch(vs, t) // the first >= t
			return len(vs) - i
		}
		return sort.SearchFloat64s(vs, math.Nextafter(t, math.Inf(1))) // those <= t
	}
	best, found := scoreEvent{}, false
	bestGain := 0.0
	for _, t := range values {
		for _, above := range []bool{true, false} {
			e := scoreEvent{t: t, above: above}
			cw, co := count(With, t, above), count(Without, t, above)
			for _, likelier := range []World{With, Without} {
				num, den := cw, co
				if likelier == Without {
					num, den = co, cw
				}
				lo, hi := bound(num, false)-delta, bound(den, true)
				if lo <= 0 || hi <= 0 {
					continue
				}
				if gain := math.Log(lo / hi); gain > bestGain {
					e.likelier = likelier
					best, bestGain, found = e, gain, true
				}
			}
		}
	}
	return best, found
}

// SplitBound is the privacy loss the split estimator demonstrates from two
// samples of a test's score (the same number of trials in each world): the
// event chosen on the first half, bounded on the second at confidence
// 1-2*alpha (alpha for each of the two rates). It returns the bound, the
// event, and the event's counts on the evaluation half in the world it is
// likelier in and in the other.
func SplitBound(with, without []float64, delta, alpha float64) (bound float64, event string, likely, other, n int) {
	half := min(len(with), len(without)) / 2
	return splitBound([2][]float64{without[:half], with[:half]}, [2][]float64{without[half : 2*half], with[half : 2*half]}, delta, alpha)
}

// splitBound is SplitBound on halves given apart, each indexed by World:
// the event is chosen on sel and bounded on eval (each the same number of
// samples in both worlds).
func splitBound(sel, eval [2][]float64, delta, alpha float64) (bound float64, event string, likely, other, n int) {
	e, ok := chooseEvent(sel[With], sel[Without], delta, alpha)
	n = len(eval[With])
	if !ok || n == 0 {
		return 0, "no event", 0, 0, n
	}
	likely, other = e.count(eval[With]), e.count(eval[Without])
	if e.likelier == Without {
		likely, other = other, likely
	}
	num := ClopperPearsonLower(likely, n, alpha) - delta
	den := ClopperPearsonUpper(other, n, alpha)
	if num <= 0 || den <= 0 {
		return 0, e.String(), likely, other, n
	}
	return max(0, math.Log(num/den)), e.String(), likely, other, n
}

package audit

import (
	"fmt"
	"math"
	"slices"

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
func chooseEvent(with, without []float64, delta, alpha float64) (scoreEvent, bool) {
	values := slices.Concat(with, without)
	slices.Sort(values)
	values = slices.Compact(values)
	best, found := scoreEvent{}, false
	bestGain := 0.0
	n := len(with)
	for _, t := range values {
		for _, above := range []bool{true, false} {
			e := scoreEvent{t: t, above: above}
			cw, co := e.count(with), e.count(without)
			for _, likelier := range []World{With, Without} {
				num, den := cw, co
				if likelier == Without {
					num, den = co, cw
				}
				lo, hi := ClopperPearsonLower(num, n, alpha)-delta, ClopperPearsonUpper(den, n, alpha)
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
	e, ok := chooseEvent(with[:half], without[:half], delta, alpha)
	evalWith, evalWithout := with[half:2*half], without[half:2*half]
	n = len(evalWith)
	if !ok || n == 0 {
		return 0, "no event", 0, 0, n
	}
	likely, other = e.count(evalWith), e.count(evalWithout)
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

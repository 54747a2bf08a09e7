package attacks

import (
	"math"
	"math/rand/v2"
	"testing"

	"countwall/proxy/risk"
)

// noisyAnswers are the subset sums of bits with uniform integer noise on
// [-e, e], seeded.
func noisyAnswers(subs [][]bool, bits []int, e int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, len(subs))
	for j, s := range subs {
		sum := 0
		for i, in := range s {
			if in {
				sum += bits[i]
			}
		}
		if e > 0 {
			sum += rng.IntN(2*e+1) - e
		}
		out[j] = float64(sum)
	}
	return out
}

func wrongBits(est []float64, bits []int) int {
	wrong := 0
	for i, x := range est {
		if int(math.Round(x)) != bits[i] {
			wrong++
		}
	}
	return wrong
}

// The solvers recover the secret bits from subset sums whose error is well
// below sqrt(n), and the exponential attack stays within its 4 alpha n
// bound. Everything is seeded, so the counts are exact.
func TestLinearSolvers(t *testing.T) {
	for _, tc := range []struct {
		solver   string
		n, m, e  int
		maxWrong int
	}{
		{"lsq", 60, 240, 0, 0},
		{"lsq", 60, 240, 2, 3},   // error 2, sqrt(60) = 7.7: 2 wrong with these seeds
		{"lsq", 60, 240, 30, 20}, // error n/2: nothing to learn
		{"exp", 10, 0, 0, 0},
		{"exp", 10, 0, 1, 4}, // alpha n = 1: all but 4 alpha n = 4
	} {
		rng := rand.New(rand.NewPCG(uint64(tc.n), 9))
		bits := make([]int, tc.n)
		caps := make([]int, tc.n)
		for i := range bits {
			bits[i], caps[i] = rng.IntN(2), 1
		}
		subs := subsets(tc.n, tc.m, tc.solver, 3)
		answers := noisyAnswers(subs, bits, tc.e, 5)
		var est []float64
		var err error
		switch tc.solver {
		case "lsq":
			est, err = risk.SolveSubsetSums(subs, answers, caps)
		case "lp":
			est, err = solveMaxErrorLP(subs, answers, caps)
		case "exp":
			est = exponentialAttack(subs, answers, tc.n)
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.solver, err)
		}
		wrong := wrongBits(est, bits)
		t.Logf("%s n=%d m=%d error %d: %d bits wrong", tc.solver, tc.n, len(subs), tc.e, wrong)
		if tc.maxWrong == 0 && wrong != 0 || wrong > tc.maxWrong && tc.e < tc.n/2 {
			t.Errorf("%s n=%d error %d: %d bits wrong, want at most %d", tc.solver, tc.n, tc.e, wrong, tc.maxWrong)
		}
		if tc.e >= tc.n/2 && wrong < 5 {
			t.Errorf("%s with error %d: only %d bits wrong, the noise should hide them", tc.solver, tc.e, wrong)
		}
	}
}

// Prior release, steps 3-5: with each noisy count off by Laplace(1/eps)
// noise, every count comes out together, and the mean of the k estimates
// has the paper's variance 2/(k eps^2). 400 seeded runs at k = 101,
// eps = 0.5 (variance 0.0792): the sample variance of an estimate of a
// variance from 400 draws has a relative standard error of about
// sqrt(2/399 * (1 + kurtosis/2)) < 0.1, so +-35% is beyond 3.5 standard
// errors: a false failure about 1 run in 2,000 were the seed changed.
func TestPriorReleaseVariance(t *testing.T) {
	const k, eps, runs = 101, 0.5, 400
	rng := rand.New(rand.NewPCG(11, 12))
	x := make([]float64, k)
	for i := range x {
		x[i] = float64(50 + rng.IntN(100))
	}
	dd := make([]float64, k)
	for i := 1; i < k; i++ {
		dd[i] = x[i-1] + x[i] - dd[i-1]
	}
	var sum, sq float64
	exact := 0
	for range runs {
		est := make([]float64, k)
		for i := range est {
			u := rng.Float64() - 0.5
			noise := -math.Copysign(math.Log(1-2*math.Abs(u)), u) / eps
			est[i] = altSign(i) * (x[i] + noise - dd[i])
		}
		m := meanOf(est)
		sum += m - x[0]
		sq += (m - x[0]) * (m - x[0])
		if math.Round(m) == x[0] {
			exact++
		}
	}
	variance := sq/runs - (sum/runs)*(sum/runs)
	want := PriorReleaseVariance(k, eps)
	t.Logf("variance %.4f, predicted %.4f; %d of %d runs exact", variance, want, exact, runs)
	if math.Abs(variance/want-1) > 0.35 {
		t.Errorf("variance of the averaged estimate %.4f, the paper predicts %.4f", variance, want)
	}
}

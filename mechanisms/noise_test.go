package mechanisms

import (
	"math"
	"strconv"
	"testing"
)

// Statistical checks in this file use zCheck = 4.9 standard errors, a
// two-sided false-failure rate of 1e-6 per check under the normal
// approximation of the sample mean and sample variance (n = 20,000 draws);
// with fewer than 50 checks the whole file fails falsely less than once in
// 20,000 runs. The seeded source makes its checks deterministic; the
// library draws from crypto/rand, so those checks are where the rate counts.
const (
	zCheck         = 4.9
	noiseSampleLen = 20000
)

// sampleMoments returns the mean and (unbiased) variance of xs.
func sampleMoments(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// checkMoments checks the sample mean against wantMean and the sample
// variance against wantVar. kurtosis is E[(X-mu)^4]/sigma^4 of the
// distribution (3 normal, 6 Laplace): the variance estimator's standard
// error is sigma^2 * sqrt((kurtosis-1)/n).
func checkMoments(t *testing.T, what string, xs []float64, wantMean, wantVar, kurtosis float64) {
	t.Helper()
	n := float64(len(xs))
	mean, variance := sampleMoments(xs)
	if d := math.Abs(mean - wantMean); d > zCheck*math.Sqrt(wantVar/n) {
		t.Errorf("%s: mean %.4g, want %.4g +- %.3g", what, mean, wantMean, zCheck*math.Sqrt(wantVar/n))
	}
	if d := math.Abs(variance - wantVar); d > zCheck*wantVar*math.Sqrt((kurtosis-1)/n) {
		t.Errorf("%s: variance %.5g, want %.5g +- %.3g", what, variance, wantVar, zCheck*wantVar*math.Sqrt((kurtosis-1)/n))
	}
}

// roundedLaplaceVariance is the variance of Laplace(scale) noise rounded to
// the nearest integer: P(k) = exp(-|k|/scale) sinh(1/(2 scale)) for k != 0,
// so the variance is 2 sinh(1/(2 scale)) * sum k^2 q^k with q = exp(-1/scale).
func roundedLaplaceVariance(scale float64) float64 {
	q := math.Exp(-1 / scale)
	return 2 * math.Sinh(1/(2*scale)) * q * (1 + q) / math.Pow(1-q, 3)
}

func noiseSources() map[string]NoiseSource {
	return map[string]NoiseSource{"seeded": SeededNoise(7), "library": LibraryNoise()}
}

func TestNoiseLaplaceScale(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: 20,000 draws per scale and source: skipped under -short; go test ./... runs it")
	}
	cases := []struct {
		l0, lInf int64
		epsilon  float64
	}{
		{1, 1, 1},   // scale 1
		{1, 1, 0.1}, // scale 10
		{2, 3, 1.5}, // scale 4: l1 = l0*lInf
	}
	for name, src := range noiseSources() {
		for _, c := range cases {
			scale := float64(c.l0*c.lInf) / c.epsilon
			xs := make([]float64, noiseSampleLen)
			for i := range xs {
				v, err := src.AddLaplace(100, c.l0, c.lInf, c.epsilon)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				xs[i] = float64(v)
			}
			checkMoments(t, name+" rounded Laplace scale "+ftoa(scale), xs, 100, roundedLaplaceVariance(scale), 6)
		}
	}
}

func TestNoiseLaplaceFloatScale(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: 20,000 draws per scale and source: skipped under -short; go test ./... runs it")
	}
	for name, src := range noiseSources() {
		for _, c := range []struct{ sens, epsilon float64 }{{1, 1}, {2, 0.5}, {3, 0.01}} {
			scale := c.sens / c.epsilon
			xs := make([]float64, noiseSampleLen)
			for i := range xs {
				v, err := src.AddLaplaceFloat(1, c.sens, c.epsilon)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				xs[i] = v
			}
			checkMoments(t, name+" Laplace scale "+ftoa(scale), xs, 1, 2*scale*scale, 6)
		}
	}
}

func TestNoiseGaussianSigma(t *testing.T) {
	// The documented calibration: for epsilon 1, delta 1e-5 the analytic
	// sigma is about 3.73, below the classical sqrt(2 ln(1.25/delta)) = 4.84.
	sigma, err := GaussianSigma(1, 1, 1, 1e-5)
	if err != nil || sigma < 3.7 || sigma > 3.76 {
		t.Fatalf("GaussianSigma(1, 1, 1, 1e-5) = %g, %v; want about 3.73", sigma, err)
	}
	if classical := math.Sqrt(2 * math.Log(1.25/1e-5)); sigma >= classical {
		t.Errorf("analytic sigma %g is not below the classical %g", sigma, classical)
	}
	if testing.Short() {
		t.Skip("statistical: 20,000 draws per sigma and source: skipped under -short; go test ./... runs it")
	}
	for name, src := range noiseSources() {
		for _, c := range []struct {
			l0, lInf       int64
			epsilon, delta float64
		}{{1, 1, 1, 1e-5}, {1, 1, 0.1, 1e-6}, {4, 1, 0.5, 1e-6}} {
			sigma, err := GaussianSigma(c.l0, c.lInf, c.epsilon, c.delta)
			if err != nil {
				t.Fatal(err)
			}
			xs := make([]float64, noiseSampleLen)
			for i := range xs {
				v, err := src.AddGaussian(-5, c.l0, c.lInf, c.epsilon, c.delta)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				xs[i] = float64(v)
			}
			// Rounding to an integer adds about 1/12 to the variance.
			checkMoments(t, name+" Gaussian sigma "+ftoa(sigma), xs, -5, sigma*sigma+1.0/12, 3)
		}
	}
}

func TestNoiseRefusesBadArguments(t *testing.T) {
	type call func(NoiseSource) error
	laplace := func(l0, lInf int64, eps float64) call {
		return func(s NoiseSource) error { _, err := s.AddLaplace(1, l0, lInf, eps); return err }
	}
	gauss := func(eps, delta float64) call {
		return func(s NoiseSource) error { _, err := s.AddGaussian(1, 1, 1, eps, delta); return err }
	}
	float := func(v, sens, eps float64) call {
		return func(s NoiseSource) error { _, err := s.AddLaplaceFloat(v, sens, eps); return err }
	}
	cases := map[string]call{
		"epsilon NaN":             laplace(1, 1, math.NaN()),
		"epsilon 0":               laplace(1, 1, 0),
		"epsilon negative":        laplace(1, 1, -1),
		"epsilon below 2^-50":     laplace(1, 1, 0x1p-51),
		"epsilon +Inf":            laplace(1, 1, math.Inf(1)),
		"epsilon above ceiling":   laplace(1, 1, MaxEpsilon*2),
		"scale above 2^40":        laplace(1, 1, 1e-13),
		"l0 zero":                 laplace(0, 1, 1),
		"lInf negative":           laplace(1, -1, 1),
		"l0*lInf overflows":       laplace(math.MaxInt64/2+1, 2, 1),
		"l0*lInf overflows (big)": laplace(math.MaxInt64, math.MaxInt64, 1),
		"gaussian delta 0":        gauss(1, 0),
		"gaussian delta 1":        gauss(1, 1),
		"gaussian delta NaN":      gauss(1, math.NaN()),
		"gaussian epsilon 0":      gauss(0, 1e-6),
		"float value NaN":         float(math.NaN(), 1, 1),
		"float value Inf":         float(math.Inf(-1), 1, 1),
		"float sensitivity 0":     float(1, 0, 1),
		"float sensitivity NaN":   float(1, math.NaN(), 1),
		"float scale above 2^40":  float(1, 1e6, 1e-7),
	}
	for name, src := range noiseSources() {
		for what, c := range cases {
			if err := c(src); err == nil {
				t.Errorf("%s: %s: no error", name, what)
			}
		}
	}
}

// Noise added near the ends of int64 saturates instead of wrapping round.
// With scale 1e6, a draw moves the count by more than 1e6 with probability
// about 1/e, so 200 draws cross the end many times over.
func TestNoiseSaturates(t *testing.T) {
	for name, src := range noiseSources() {
		for i := 0; i < 200; i++ {
			hi, err := src.AddLaplace(math.MaxInt64-10, 1, 1, 1e-6)
			if err != nil || hi < math.MaxInt64-1e9 {
				t.Fatalf("%s: Laplace near MaxInt64 gave %d, %v", name, hi, err)
			}
			lo, err := src.AddGaussian(math.MinInt64+10, 1, 1, 1e-5, 1e-6)
			if err != nil || lo > math.MinInt64+1e12 {
				t.Fatalf("%s: Gaussian near MinInt64 gave %d, %v", name, lo, err)
			}
		}
	}
	if got := saturatingAdd(math.MaxInt64, math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("saturatingAdd(max, max) = %d", got)
	}
	if got := saturatingAdd(math.MinInt64, -1); got != math.MinInt64 {
		t.Errorf("saturatingAdd(min, -1) = %d", got)
	}
	if got := saturatingAdd(-3, 5); got != 2 {
		t.Errorf("saturatingAdd(-3, 5) = %d", got)
	}
}

func TestNoiseSeededIsReproducible(t *testing.T) {
	a, b := SeededNoise(3), SeededNoise(3)
	for i := 0; i < 50; i++ {
		x, _ := a.AddLaplace(0, 1, 1, 0.5)
		y, _ := b.AddLaplace(0, 1, 1, 0.5)
		if x != y {
			t.Fatalf("draw %d: %d != %d from the same seed", i, x, y)
		}
	}
}

func ftoa(f float64) string { return fmtG(f) }

func fmtG(f float64) string { return strconv.FormatFloat(f, 'g', 4, 64) }

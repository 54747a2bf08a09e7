package mechanisms

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"

	"github.com/google/differential-privacy/go/v3/noise"

	"countwall/ir"
)

// NoiseSource draws the noise of the differential-privacy mechanisms
// (laplace, gaussian, idp, bdp). LibraryNoise is the production source,
// backed by Google's differential-privacy library; SeededNoise is a
// reproducible stand-in for tests. Implementations are safe for concurrent
// use and never panic on bad input: they return an error instead.
type NoiseSource interface {
	// AddLaplace returns value plus Laplace noise of scale l0*lInf/epsilon
	// rounded to an integer, saturating at the int64 range instead of
	// wrapping.
	AddLaplace(value, l0, lInf int64, epsilon float64) (int64, error)
	// AddGaussian returns value plus Gaussian noise whose standard deviation
	// is GaussianSigma(l0, lInf, epsilon, delta), rounded to an integer,
	// saturating.
	AddGaussian(value, l0, lInf int64, epsilon, delta float64) (int64, error)
	// AddLaplaceFloat returns value plus Laplace noise of scale
	// sensitivity/epsilon. sensitivity must be > 0.
	AddLaplaceFloat(value, sensitivity, epsilon float64) (float64, error)
	// AddGaussianFloat returns value plus Gaussian noise whose standard
	// deviation is GaussianSigmaFloat(l0, lInf, epsilon, delta).
	AddGaussianFloat(value float64, l0 int64, lInf, epsilon, delta float64) (float64, error)
}

// The edges of the noise library, guarded here so that it is never called
// with arguments it would refuse or mishandle.
const (
	// MinEpsilon is the smallest per-query epsilon any noise source accepts:
	// the library refuses epsilon below 2^-50.
	MinEpsilon = 0x1p-50
	// MaxEpsilon is the largest per-query epsilon accepted. Beyond it the
	// noise is negligible against a count and the claim meaningless; it also
	// keeps exp(epsilon) and the noise granularity far from float limits.
	MaxEpsilon = 100.0
	// maxNoiseScale bounds l1/epsilon for Laplace (and sigma for Gaussian)
	// noise. Up to 2^40 the library's granularity is at most 1, so the noise
	// it adds to 0 is exactly the noise it would add to any integer, and
	// adding it ourselves with saturation is the same mechanism without the
	// overflow. (Above it the library rounds the count to a coarser grid.)
	maxNoiseScale = 0x1p40
)

// checkEpsilon refuses an epsilon the noise sources cannot use.
func checkEpsilon(epsilon float64) error {
	if math.IsNaN(epsilon) || epsilon < MinEpsilon || epsilon > MaxEpsilon {
		return fmt.Errorf("epsilon %g is outside the supported range [2^-50, %g]", epsilon, float64(MaxEpsilon))
	}
	return nil
}

// checkDelta refuses a delta the Gaussian source cannot use.
func checkDelta(delta float64) error {
	if math.IsNaN(delta) || delta <= 0 || delta > ir.MaxDelta {
		return fmt.Errorf("delta %g is outside the supported range (0, %g]", delta, float64(ir.MaxDelta))
	}
	return nil
}

// l1Sensitivity is l0*lInf, refusing non-positive factors and overflow.
func l1Sensitivity(l0, lInf int64) (int64, error) {
	if l0 < 1 || lInf < 1 {
		return 0, fmt.Errorf("sensitivities must be >= 1, got l0 %d and lInf %d", l0, lInf)
	}
	hi, lo := bits.Mul64(uint64(l0), uint64(lInf))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, fmt.Errorf("sensitivity l0*lInf = %d*%d overflows int64", l0, lInf)
	}
	return int64(lo), nil
}

// checkLaplace validates the arguments of an integer Laplace draw.
func checkLaplace(l0, lInf int64, epsilon float64) error {
	l1, err := l1Sensitivity(l0, lInf)
	if err != nil {
		return err
	}
	if err := checkEpsilon(epsilon); err != nil {
		return err
	}
	if float64(l1)/epsilon > maxNoiseScale {
		return fmt.Errorf("Laplace scale %g (sensitivity %d / epsilon %g) exceeds the supported %g", float64(l1)/epsilon, l1, epsilon, float64(maxNoiseScale))
	}
	return nil
}

// GaussianSigma is the standard deviation of the Gaussian noise that makes
// a query with the given sensitivities (epsilon, delta)-DP: the library's
// tight analytic calibration (Balle and Wang 2018), accurate to 0.1%.
func GaussianSigma(l0, lInf int64, epsilon, delta float64) (float64, error) {
	if _, err := l1Sensitivity(l0, lInf); err != nil {
		return 0, err
	}
	if err := checkEpsilon(epsilon); err != nil {
		return 0, err
	}
	if err := checkDelta(delta); err != nil {
		return 0, err
	}
	sigma := noise.SigmaForGaussian(l0, float64(lInf), epsilon, delta)
	if !(sigma > 0) || sigma > maxNoiseScale {
		return 0, fmt.Errorf("Gaussian sigma %g for epsilon %g, delta %g is outside the supported (0, %g]", sigma, epsilon, delta, float64(maxNoiseScale))
	}
	return sigma, nil
}

// GaussianSigmaFloat is GaussianSigma for a real lInf (a sum's C times its
// largest bound), as the library computes it for its float aggregates.
func GaussianSigmaFloat(l0 int64, lInf, epsilon, delta float64) (float64, error) {
	if l0 < 1 || math.IsNaN(lInf) || lInf <= 0 || math.IsInf(lInf, 0) {
		return 0, fmt.Errorf("sensitivities must be positive, got l0 %d and lInf %g", l0, lInf)
	}
	if err := checkEpsilon(epsilon); err != nil {
		return 0, err
	}
	if err := checkDelta(delta); err != nil {
		return 0, err
	}
	sigma := noise.SigmaForGaussian(l0, lInf, epsilon, delta)
	if !(sigma > 0) || sigma > maxNoiseScale {
		return 0, fmt.Errorf("Gaussian sigma %g for epsilon %g, delta %g is outside the supported (0, %g]", sigma, epsilon, delta, float64(maxNoiseScale))
	}
	return sigma, nil
}

// checkLaplaceFloat validates the arguments of a float Laplace draw.
func checkLaplaceFloat(value, sensitivity, epsilon float64) error {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return fmt.Errorf("value %g is not finite", value)
	}
	if math.IsNaN(sensitivity) || sensitivity <= 0 || math.IsInf(sensitivity, 0) {
		return fmt.Errorf("sensitivity %g must be positive and finite", sensitivity)
	}
	if err := checkEpsilon(epsilon); err != nil {
		return err
	}
	if sensitivity/epsilon > maxNoiseScale {
		return fmt.Errorf("Laplace scale %g (sensitivity %g / epsilon %g) exceeds the supported %g", sensitivity/epsilon, sensitivity, epsilon, float64(maxNoiseScale))
	}
	return nil
}

// saturatingAdd returns a+b clamped to the int64 range.
func saturatingAdd(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// LibraryNoise is the production noise source: the secure (floating-point
// safe) Laplace and Gaussian samplers of
// github.com/google/differential-privacy/go/v3, drawing from crypto/rand.
// They sample on a grid of 2^-40 (or finer) times the scale and round the
// result to an integer, so integer answers carry rounded Laplace (Gaussian)
// noise. Its integer samples are drawn ahead of the statements that take
// them (noise_ahead.go), so that how long a statement takes does not
// follow its noise.
func LibraryNoise() NoiseSource { return newAheadNoise(drawLibraryZero) }

// libraryNoise draws the float noise in place; aheadNoise, which embeds
// it, draws the integer noise.
type libraryNoise struct{}

func (libraryNoise) AddLaplaceFloat(value, sensitivity, epsilon float64) (float64, error) {
	if err := checkLaplaceFloat(value, sensitivity, epsilon); err != nil {
		return 0, err
	}
	// The library's Laplace scale is l0*lInf/epsilon: l0 = 1, lInf = sensitivity.
	v, err := noise.Laplace().AddNoiseFloat64(value, 1, sensitivity, epsilon, 0)
	if err != nil {
		return 0, fmt.Errorf("drawing Laplace noise: %w", err)
	}
	return v, nil
}

func (libraryNoise) AddGaussianFloat(value float64, l0 int64, lInf, epsilon, delta float64) (float64, error) {
	if _, err := GaussianSigmaFloat(l0, lInf, epsilon, delta); err != nil {
		return 0, err
	}
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return 0, fmt.Errorf("value %g is not finite", value)
	}
	v, err := noise.Gaussian().AddNoiseFloat64(value, l0, lInf, epsilon, delta)
	if err != nil {
		return 0, fmt.Errorf("drawing Gaussian noise: %w", err)
	}
	return v, nil
}

// SeededNoise is a reproducible noise source for tests and experiments. It
// draws from the same distributions as LibraryNoise (rounded Laplace,
// rounded Gaussian, continuous Laplace) from a ChaCha8 stream keyed by seed, so its answers can be
// predicted by anyone who knows the seed: never use it to protect data.
func SeededNoise(seed uint64) NoiseSource {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	key := sha256.Sum256(append([]byte("countwall seeded noise\x00"), b[:]...))
	return &seededNoise{rng: rand.New(rand.NewChaCha8(key))}
}

type seededNoise struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// laplace draws Laplace noise of the given scale.
func (s *seededNoise) laplace(scale float64) float64 {
	s.mu.Lock()
	e := s.rng.ExpFloat64()
	negative := s.rng.IntN(2) == 0
	s.mu.Unlock()
	if negative {
		e = -e
	}
	return e * scale
}

func (s *seededNoise) AddLaplace(value, l0, lInf int64, epsilon float64) (int64, error) {
	if err := checkLaplace(l0, lInf, epsilon); err != nil {
		return 0, err
	}
	l1, _ := l1Sensitivity(l0, lInf)
	// |noise| < 2^40 * 50 or so in practice; math.Round then int64 is exact.
	return saturatingAdd(value, int64(math.Round(s.laplace(float64(l1)/epsilon)))), nil
}

func (s *seededNoise) AddGaussian(value, l0, lInf int64, epsilon, delta float64) (int64, error) {
	sigma, err := GaussianSigma(l0, lInf, epsilon, delta)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	z := s.rng.NormFloat64()
	s.mu.Unlock()
	// |z*sigma| <= 2^40 * a few: far inside int64.
	return saturatingAdd(value, int64(math.Round(z*sigma))), nil
}

func (s *seededNoise) AddLaplaceFloat(value, sensitivity, epsilon float64) (float64, error) {
	if err := checkLaplaceFloat(value, sensitivity, epsilon); err != nil {
		return 0, err
	}
	return value + s.laplace(sensitivity/epsilon), nil
}

func (s *seededNoise) AddGaussianFloat(value float64, l0 int64, lInf, epsilon, delta float64) (float64, error) {
	sigma, err := GaussianSigmaFloat(l0, lInf, epsilon, delta)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return 0, fmt.Errorf("value %g is not finite", value)
	}
	s.mu.Lock()
	z := s.rng.NormFloat64()
	s.mu.Unlock()
	return value + z*sigma, nil
}

// noiseFor picks the noise source for a mechanism built with env: the
// library's secure noise, or the seeded source when env.Seed is set (tests).
func noiseFor(env Env) NoiseSource {
	if env.Seed != 0 {
		return SeededNoise(uint64(env.Seed))
	}
	return LibraryNoise()
}

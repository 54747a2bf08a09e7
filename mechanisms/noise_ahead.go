package mechanisms

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/google/differential-privacy/go/v3/noise"
)

// Drawing ahead. The library's integer samplers search for their sample,
// and the search is longer the farther the sample lies from zero: drawn
// while a statement waits, the noise's size would show in how long the
// statement takes (a Laplace draw of scale 30 took 4.9 µs at the median for
// the smallest twentieth of |noise| and 5.6 µs for the largest hundredth),
// and the answer is the count plus that noise. The integer noise is drawn
// for 0 and added (maxNoiseScale), so it can be drawn before the statement
// comes: each scale of noise (kind, sensitivities, epsilon, delta) keeps
// samples drawn in the background, and a statement takes one a cell, each
// used once. A statement that finds too few ready draws the rest itself,
// as before: the first statement of a scale (an analyst who sets a new
// epsilon for every statement makes every one the first), and cells past
// those ready. The float samplers round the value itself and are drawn in
// place.

// noiseAheadDepth is how many samples of one scale are kept ready: a
// GROUP BY takes one a cell. They are drawn again once half are taken, so
// that a goroutine is started for many samples, not one.
const noiseAheadDepth = 64

// maxNoiseScales bounds the scales kept ready: an analyst who changes
// epsilon with every statement would otherwise grow them without end.
const maxNoiseScales = 32

// noiseScale names one integer noise distribution.
type noiseScale struct {
	gaussian       bool
	l0, lInf       int64
	epsilon, delta float64
}

// zeroDrawer draws one sample of a scale's noise (the noise added to 0).
type zeroDrawer func(noiseScale) (int64, error)

// drawLibraryZero is the library's sample for a scale the caller checked.
func drawLibraryZero(s noiseScale) (int64, error) {
	if s.gaussian {
		return noise.Gaussian().AddNoiseInt64(0, s.l0, s.lInf, s.epsilon, s.delta)
	}
	return noise.Laplace().AddNoiseInt64(0, s.l0, s.lInf, s.epsilon, 0)
}

// aheadNoise is LibraryNoise with its integer samples drawn ahead.
type aheadNoise struct {
	libraryNoise
	draw   zeroDrawer
	mu     sync.Mutex
	scales map[noiseScale]*readySamples
	// inPlace counts the samples statements drew themselves.
	inPlace atomic.Int64
}

// readySamples are one scale's samples drawn ahead; filling says a
// goroutine is drawing more.
type readySamples struct {
	ready   chan int64
	filling atomic.Bool
	failed  atomic.Bool // the last draw behind failed: wait for a statement to retry
}

func newAheadNoise(draw zeroDrawer) *aheadNoise {
	return &aheadNoise{draw: draw, scales: map[noiseScale]*readySamples{}}
}

func (a *aheadNoise) AddLaplace(value, l0, lInf int64, epsilon float64) (int64, error) {
	if err := checkLaplace(l0, lInf, epsilon); err != nil {
		return 0, err
	}
	n, err := a.sample(noiseScale{l0: l0, lInf: lInf, epsilon: epsilon})
	if err != nil {
		return 0, fmt.Errorf("drawing Laplace noise: %w", err)
	}
	return saturatingAdd(value, n), nil
}

func (a *aheadNoise) AddGaussian(value, l0, lInf int64, epsilon, delta float64) (int64, error) {
	if _, err := GaussianSigma(l0, lInf, epsilon, delta); err != nil {
		return 0, err
	}
	n, err := a.sample(noiseScale{gaussian: true, l0: l0, lInf: lInf, epsilon: epsilon, delta: delta})
	if err != nil {
		return 0, fmt.Errorf("drawing Gaussian noise: %w", err)
	}
	return saturatingAdd(value, n), nil
}

// sample takes a sample of s drawn ahead, or draws one in place when none
// is ready, and has more drawn once half are taken.
func (a *aheadNoise) sample(s noiseScale) (int64, error) {
	r := a.samplesOf(s)
	defer a.refillAtHalf(s, r)
	select {
	case n := <-r.ready:
		return n, nil
	default:
		a.inPlace.Add(1)
		return a.draw(s)
	}
}

// samplesOf is s's samples, made at its first use. Past maxNoiseScales
// a scale is let go to make room (the first the map yields): an analyst
// who changes epsilon with every statement cannot leave the others' scales
// drawing in place.
func (a *aheadNoise) samplesOf(s noiseScale) *readySamples {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.scales[s]
	if r == nil {
		if len(a.scales) >= maxNoiseScales {
			for old := range a.scales {
				delete(a.scales, old) // its filler, if any, ends on its own
				break
			}
		}
		r = &readySamples{ready: make(chan int64, noiseAheadDepth)}
		a.scales[s] = r
	}
	return r
}

// refillAtHalf draws s's samples in the background until noiseAheadDepth
// are ready, once half or more are taken, unless a goroutine is at it
// already. A failed draw stops it: the statements then draw their own and
// meet the error there.
func (a *aheadNoise) refillAtHalf(s noiseScale, r *readySamples) {
	if len(r.ready) > noiseAheadDepth/2 || !r.filling.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer func() {
			r.filling.Store(false)
			// Taken while the flag was still up: go on.
			if len(r.ready) <= noiseAheadDepth/2 && !r.failed.Load() {
				a.refillAtHalf(s, r)
			}
		}()
		for len(r.ready) < cap(r.ready) {
			n, err := a.draw(s)
			if err != nil {
				r.failed.Store(true)
				return
			}
			r.failed.Store(false)
			// Only this goroutine adds samples, and it checked there
			// was room: the send does not wait.
			r.ready <- n
		}
	}()
}

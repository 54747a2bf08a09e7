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
// statement takes (a Laplace draw of scale 30 took 4.9 µs at the median
// for the smallest twentieth of |noise| and 5.6 µs for the largest
// hundredth),
// and the answer is the count plus that noise. The integer noise is drawn
// for 0 and added (maxNoiseScale), so it can be drawn before the statement
// comes: each kind and scale of noise keeps a few samples drawn in the
// background, and a statement takes one, used once, and has the next drawn
// behind it. A statement that finds none ready (a burst, or more scales at
// once than are kept) draws its own, as before. The float samplers round
// the value itself and are drawn in place.

// noiseAheadDepth is how many samples of one scale are kept ready; they
// are drawn again once half are taken, so that a goroutine is started for
// several samples, not one.
const noiseAheadDepth = 8

// maxNoiseScales bounds the scales kept ready: an analyst who changes
// epsilon with every statement would otherwise grow them without end.
const maxNoiseScales = 64

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
}

// readySamples are one scale's samples drawn ahead; filling says a
// goroutine is drawing more.
type readySamples struct {
	ready   chan int64
	filling atomic.Bool
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

// sample takes a sample of s drawn ahead and has another drawn, or draws
// one in place when none is ready.
func (a *aheadNoise) sample(s noiseScale) (int64, error) {
	r := a.samplesOf(s)
	if r == nil {
		return a.draw(s)
	}
	defer func() {
		if len(r.ready) <= noiseAheadDepth/2 {
			a.refill(s, r)
		}
	}()
	select {
	case n := <-r.ready:
		return n, nil
	default:
		return a.draw(s)
	}
}

// samplesOf is s's samples, made at its first use; nil once
// maxNoiseScales are kept.
func (a *aheadNoise) samplesOf(s noiseScale) *readySamples {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.scales[s]
	if r == nil && len(a.scales) < maxNoiseScales {
		r = &readySamples{ready: make(chan int64, noiseAheadDepth)}
		a.scales[s] = r
	}
	return r
}

// refill draws s's samples in the background until noiseAheadDepth are
// ready, unless a goroutine is at it already. A failed draw stops it:
// the statements then draw their own and meet the error there.
func (a *aheadNoise) refill(s noiseScale, r *readySamples) {
	if !r.filling.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer r.filling.Store(false)
		for len(r.ready) < cap(r.ready) {
			n, err := a.draw(s)
			if err != nil {
				return
			}
			select {
			case r.ready <- n:
			default: // filled meanwhile by another refill
				return
			}
		}
	}()
}

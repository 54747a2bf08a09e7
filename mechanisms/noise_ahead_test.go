package mechanisms

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingDrawer draws 1, 2, 3, ... (for any scale), so that which sample a
// statement got, and whether it was drawn ahead, can be told.
type countingDrawer struct {
	drawn     atomic.Int64
	fail      atomic.Bool
	failAfter int64 // when set, the draws after this many fail
}

func (c *countingDrawer) draw(noiseScale) (int64, error) {
	if c.fail.Load() || (c.failAfter > 0 && c.drawn.Load() >= c.failAfter) {
		return 0, errors.New("out of randomness")
	}
	return c.drawn.Add(1), nil
}

// settled waits until no goroutine is drawing ahead for s.
func settled(t *testing.T, a *aheadNoise, s noiseScale) *readySamples {
	t.Helper()
	r := a.samplesOf(s)
	for deadline := time.Now().Add(10 * time.Second); r.filling.Load(); {
		if time.Now().After(deadline) {
			t.Fatal("samples still being drawn after 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	return r
}

// TestNoiseDrawnAhead: the first statement of a scale draws its own sample
// and has noiseAheadDepth (64) drawn behind it; the next statements take
// those in the order drawn, and once half are taken the rest are drawn
// again; another scale keeps its own.
func TestNoiseDrawnAhead(t *testing.T) {
	c := &countingDrawer{}
	a := newAheadNoise(c.draw)
	laplace := noiseScale{l0: 1, lInf: 3, epsilon: 0.5}
	gaussian := noiseScale{gaussian: true, l0: 1, lInf: 3, epsilon: 0.5, delta: 1e-6}
	addLaplace := func() (int64, error) { return a.AddLaplace(100, 1, 3, 0.5) }
	takeLaplace := func(n int) func() (int64, error) {
		return func() (v int64, err error) {
			for range n {
				if v, err = addLaplace(); err != nil {
					return 0, err
				}
			}
			return v, nil
		}
	}
	steps := []struct {
		add       func() (int64, error)
		scale     noiseScale
		want      int64 // the answer (the last, when several): 100 plus the sample taken
		drawn     int64 // samples drawn in all once the drawing settles
		readyLeft int
		inPlace   int64 // samples statements drew themselves, in all
	}{
		{addLaplace, laplace, 101, 65, 64, 1}, // its own; 2-65 behind it
		{addLaplace, laplace, 102, 65, 63, 1},
		{takeLaplace(30), laplace, 132, 65, 33, 1},
		{addLaplace, laplace, 133, 97, 64, 1}, // half taken: 66-97 drawn behind
		// The same sensitivities under Gaussian noise are another scale.
		{func() (int64, error) { return a.AddGaussian(100, 1, 3, 0.5, 1e-6) }, gaussian, 198, 162, 64, 2},
		{addLaplace, laplace, 134, 162, 63, 2},
	}
	for i, s := range steps {
		got, err := s.add()
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		r := settled(t, a, s.scale)
		if got != s.want || c.drawn.Load() != s.drawn || len(r.ready) != s.readyLeft || a.inPlace.Load() != s.inPlace {
			t.Errorf("step %d: answer %d, %d drawn, %d ready, %d in place; want %d, %d, %d, %d",
				i, got, c.drawn.Load(), len(r.ready), a.inPlace.Load(), s.want, s.drawn, s.readyLeft, s.inPlace)
		}
	}
}

// TestNoiseDrawnAheadIsUsedOnce: 8 goroutines take 400 samples each of one
// scale at once; every sample is taken at most once, and every one taken
// was drawn.
func TestNoiseDrawnAheadIsUsedOnce(t *testing.T) {
	c := &countingDrawer{}
	a := newAheadNoise(c.draw)
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 400 {
				v, err := a.AddLaplace(0, 1, 1, 1)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[v] {
					t.Errorf("sample %d taken twice", v)
				}
				seen[v] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r := settled(t, a, noiseScale{l0: 1, lInf: 1, epsilon: 1})
	if len(seen) != 3200 {
		t.Errorf("%d distinct samples taken, want 3200", len(seen))
	}
	// Nothing drawn is lost: every sample was taken or is still ready.
	if drawn := c.drawn.Load(); drawn != 3200+int64(len(r.ready)) {
		t.Errorf("%d drawn, %d taken, %d ready", drawn, len(seen), len(r.ready))
	}
	for v := range seen {
		if v < 1 || v > c.drawn.Load() {
			t.Errorf("sample %d was never drawn (%d drawn)", v, c.drawn.Load())
		}
	}
}

// TestNoiseDrawnAheadLimits: arguments the library would refuse are
// refused before any sample is drawn or kept; a failed draw is the
// statement's error; past maxNoiseScales scales the first kept is let go.
func TestNoiseDrawnAheadLimits(t *testing.T) {
	c := &countingDrawer{}
	a := newAheadNoise(c.draw)
	if _, err := a.AddLaplace(0, 1, 1, -1); err == nil {
		t.Error("epsilon -1 accepted")
	}
	if _, err := a.AddGaussian(0, 1, 1, 1, 0); err == nil {
		t.Error("Gaussian delta 0 accepted")
	}
	if c.drawn.Load() != 0 || len(a.scales) != 0 {
		t.Errorf("refused arguments drew %d samples and kept %d scales", c.drawn.Load(), len(a.scales))
	}
	for i := range maxNoiseScales + 1 {
		if _, err := a.AddLaplace(0, 1, 1, 1+float64(i)/128); err != nil {
			t.Fatal(err)
		}
	}
	a.mu.Lock()
	kept, newest := len(a.scales), a.scales[noiseScale{l0: 1, lInf: 1, epsilon: 1 + float64(maxNoiseScales)/128}]
	a.mu.Unlock()
	if kept != maxNoiseScales || newest == nil {
		t.Errorf("%d scales kept (the newest kept: %t), want %d and the newest", kept, newest != nil, maxNoiseScales)
	}
	c.fail.Store(true)
	if _, err := a.AddLaplace(0, 1, 1, 9); err == nil {
		t.Error("a failed draw of a new scale was not the statement's error")
	}
}

// TestNoiseDrawnAheadAfterAFailedDraw: when the draws behind fail, the
// samples already ready are still taken, each once, and a statement that
// finds none ready meets the error.
func TestNoiseDrawnAheadAfterAFailedDraw(t *testing.T) {
	c := &countingDrawer{failAfter: 9}
	a := newAheadNoise(c.draw)
	scale := noiseScale{l0: 1, lInf: 1, epsilon: 1}
	if v, err := a.AddLaplace(0, 1, 1, 1); err != nil || v != 1 {
		t.Fatalf("first statement: %d, %v; want its own sample 1", v, err)
	}
	settled(t, a, scale) // 2-9 drawn behind, then the draws fail
	for want := int64(2); want <= 9; want++ {
		v, err := a.AddLaplace(0, 1, 1, 1)
		if err != nil || v != want {
			t.Fatalf("statement %d: %d, %v; want the ready sample %d", want, v, err, want)
		}
		settled(t, a, scale)
	}
	if _, err := a.AddLaplace(0, 1, 1, 1); err == nil {
		t.Error("with none ready and the draws failing, a statement was answered")
	}
}

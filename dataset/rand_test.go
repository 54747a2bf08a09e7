package dataset

import (
	"math"
	"testing"
)

func TestClampRound(t *testing.T) {
	cases := []struct {
		x      float64
		lo, hi int64
		want   int64
	}{
		{24.49, 1, 51, 24},
		{24.5, 1, 51, 25}, // halves round away from zero
		{25.5, 1, 51, 26},
		{0.49, 1, 51, 1}, // nearest bin is 0, outside: the end bin
		{-3, 1, 51, 1},
		{51.5, 1, 51, 51},
		{1e300, 1, 51, 51},
		{math.Inf(-1), 0, 1, 0},
	}
	for _, c := range cases {
		if got := clampRound(c.x, c.lo, c.hi); got != c.want {
			t.Errorf("clampRound(%v, %d, %d) = %d, want %d", c.x, c.lo, c.hi, got, c.want)
		}
	}
}

func TestWeightedDraw(t *testing.T) {
	// Weight 0 is never drawn; the others in proportion 1:2:5. With n =
	// 80,000 the share of each has standard error below 0.0018; the bound
	// 0.012 is over 6 of them (false failure below 1e-8).
	w := newWeighted(1, 0, 2, 5)
	r := newRNG(1, 2)
	const n = 80_000
	var counts [4]int
	for range n {
		counts[w.draw(r)]++
	}
	if counts[1] != 0 {
		t.Errorf("a weight-0 index was drawn %d times", counts[1])
	}
	for i, want := range []float64{1.0 / 8, 0, 2.0 / 8, 5.0 / 8} {
		if got := float64(counts[i]) / n; math.Abs(got-want) > 0.012 {
			t.Errorf("index %d drawn %.4f of the time, want %.4f", i, got, want)
		}
	}
}

func TestRNGIsFixedBySeed(t *testing.T) {
	a, b, c := newRNG(7, 1), newRNG(7, 1), newRNG(7, 2)
	same, differ := true, false
	for range 100 {
		x, y, z := a.float64(), b.float64(), c.float64()
		same = same && x == y
		differ = differ || x != z
		if x < 0 || x >= 1 {
			t.Fatalf("float64() = %v, outside [0, 1)", x)
		}
	}
	if !same {
		t.Error("equal seeds gave different values")
	}
	if !differ {
		t.Error("different streams gave the same values")
	}
}

func TestNormalMoments(t *testing.T) {
	// n = 200,000 standard normals: the mean has standard error 0.0022 and
	// the variance 0.0032; bounds of 0.015 and 0.02 are over 6 of them.
	r := newRNG(3, 4)
	const n = 200_000
	var sum, sumSq float64
	for range n {
		x := r.normal()
		sum += x
		sumSq += x * x
	}
	mean := sum / n
	variance := sumSq/n - mean*mean
	if math.Abs(mean) > 0.015 || math.Abs(variance-1) > 0.02 {
		t.Errorf("mean %.4f, variance %.4f; want 0 and 1", mean, variance)
	}
}

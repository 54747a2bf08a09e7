package state

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// A budget figure is the decimal its charges add up to.
func TestFormatFigure(t *testing.T) {
	tenTenths, sixes := 0.0, 0.0
	for range 10 {
		tenTenths += 0.1
	}
	for range 60 {
		sixes += 0.1
	}
	tests := []struct {
		x    float64
		want string
	}{
		{tenTenths, "1"},
		{sixes, "6"},
		{5.999999999999995, "6"},
		{0.30000000000000004, "0.3"},
		{1.4000000000000004, "1.4"},
		{1e-10, "1e-10"},
		{3 * 1e-10, "3e-10"},
		{0.123456789012, "0.123456789012"},
		{0, "0"},
		{math.Inf(1), "+Inf"},
	}
	for _, tt := range tests {
		if got := FormatFigure(tt.x); got != tt.want {
			t.Errorf("FormatFigure(%v) = %q, want %q", tt.x, got, tt.want)
		}
	}
	if Figure(sixes) != 6 || !math.IsNaN(Figure(math.NaN())) {
		t.Errorf("Figure(%v) = %v", sixes, Figure(sixes))
	}
}

// Shares that add up to the cap exactly fit it, however the float sum
// rounds, and leave nothing: the next charge is refused, however small,
// and its refusal reads the decimal figures. The total charged never
// passes the cap by more than the rounding tolerance.
func TestSharesMeetTheCapExactly(t *testing.T) {
	tests := []struct {
		cap, share float64
		n          int
		reserve    int
	}{
		{1, 0.1, 10, 1},
		{1, 0.1, 10, 4},
		{1, 0.1, 10, 100},
		{0.3, 0.1, 3, 1},
		{2, 0.2, 10, 1},
		{1e-3, 1e-4, 10, 1000},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "state.db")
		l := openLedger(t, path, tt.reserve)
		ctx := context.Background()
		caps := Caps{Epsilon: tt.cap, Delta: NoCap}
		var bal Balance
		for i := range tt.n {
			var err error
			if bal, err = l.Charge(ctx, Entry{Analyst: "a", Kind: dp, Epsilon: tt.share}, caps); err != nil {
				t.Fatalf("cap %g, share %g, reserve %d: charge %d refused: %v", tt.cap, tt.share, tt.reserve, i+1, err)
			}
		}
		if bal.EpsilonRemaining() != 0 {
			t.Errorf("cap %g, share %g, reserve %d: remaining %g after %d charges, want 0", tt.cap, tt.share, tt.reserve, bal.EpsilonRemaining(), tt.n)
		}
		for _, cost := range []float64{tt.share, 1e-12} {
			_, err := l.Charge(ctx, Entry{Analyst: "a", Kind: dp, Epsilon: cost}, caps)
			want := "dp epsilon spent " + FormatFigure(tt.cap) + " of " + FormatFigure(tt.cap) + ", this query needs " + FormatFigure(cost)
			if !isExhausted(err) || !strings.Contains(err.Error(), want) {
				t.Errorf("cap %g, share %g, reserve %d: a charge of %g past the cap: %v, want %q", tt.cap, tt.share, tt.reserve, cost, err, want)
			}
		}
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
		// Settled and read back from the state: within the cap.
		bals, err := openLedger(t, path, 1).Balances(ctx, "a", caps)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bals {
			if b.Kind == dp && (b.EpsilonSpent > tt.cap*(1+capTolerance) || b.EpsilonRemaining() != 0 || FormatFigure(b.EpsilonSpent) != FormatFigure(tt.cap)) {
				t.Errorf("cap %g, share %g, reserve %d: the state holds %v spent, %v remaining", tt.cap, tt.share, tt.reserve, b.EpsilonSpent, b.EpsilonRemaining())
			}
		}
	}
}

package bounding

import (
	"context"
	"math"
	"strings"
	"testing"
)

// TestErrorVsG: on 200 people x 10 snps, G = 10 (every cell) drops nothing,
// G = 1 drops most of each person's cells, and the noise scale is G/epsilon.
// At G = 1 the firewall's answers are the bounded counts with noise of
// scale 1, so their error is the bias give or take the mean |noise| (about
// 1): the bound is in force, not only stated.
// With 20 runs of 10 cells at scale 10 the mean absolute error of G = 10 is
// the mean of 200 exponential |noise| values of mean 10 and sd 10 (no true
// count here is near 0, so clamping plays no part): its sd is 0.71, and
// [6, 14] is 5.6 sd either side, which a Chernoff bound puts at a
// false-failure rate below 1e-6.
func TestErrorVsG(t *testing.T) {
	rows, err := ErrorVsG(context.Background(), t.TempDir(), Options{People: 200, Attributes: 10, Epsilon: 1, Runs: 20, Gs: []int64{1, 10, 50}, Seed: 7, noiseSeed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	one, all, over := rows[0], rows[1], rows[2]
	if one.G != 1 || one.NoiseScale != 1 || one.Bias < 40 || math.Abs(one.MeanAbsError-one.Bias) > 2 {
		t.Errorf("G = 1: %+v; want scale 1, a large bias and an error within 2 of it", one)
	}
	if all.G != 10 || all.NoiseScale != 10 || all.Bias != 0 || all.MeanAbsError < 6 || all.MeanAbsError > 14 {
		t.Errorf("G = 10: %+v; want scale 10, no bias, error about 10", all)
	}
	// G beyond the number of cells is lowered to it.
	if over.G != 10 || over.NoiseScale != 10 {
		t.Errorf("G = 50: %+v; want it lowered to 10", over)
	}
}

// TestBias: a person in k cells loses max(k-G, 0) of them; the bias is
// the rows lost over the cells.
func TestBias(t *testing.T) {
	tr := truth{counts: make([]int64, 10), perPerson: []int64{1, 3, 10}}
	for _, tc := range []struct {
		g    int64
		want float64
	}{{1, 1.1}, {3, 0.7}, {9, 0.1}, {10, 0}, {50, 0}} {
		if got := tr.bias(tc.g); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("bias(%d) = %g, want %g", tc.g, got, tc.want)
		}
	}
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	o := Options{People: 1000, Attributes: 50, Epsilon: 1, Runs: 20}
	rows := []Row{{G: 1, NoiseScale: 1, Bias: 490.25, MeanAbsError: 490.3, RelativeError: 0.98}, {G: 50, NoiseScale: 50, Bias: 0, MeanAbsError: 39.96, RelativeError: 0.08}}
	if err := WriteTable(&b, o, rows); err != nil {
		t.Fatal(err)
	}
	want := "laplace on a 1000 x 50 long table, epsilon 1 per query, 20 runs\n\n" +
		"   G  noise scale  bias per cell  mean abs error  relative error\n" +
		"   1          1.0          490.2           490.3           98.0%\n" +
		"  50         50.0            0.0            40.0            8.0%\n"
	if b.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", b.String(), want)
	}
}

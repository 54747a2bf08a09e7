package risk

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"countwall/proxy/state/release"
)

// The prior-release pattern: another firewall published the k-1 exact pair
// counts of age (its audit, read as Options.Published); this one answered
// one noisy histogram. Combined, every count comes out as the attack's own
// mean estimate (x_1 the mean of the k estimates, x_i = (-1)^(i-1) x_1 + d_i),
// with two standard errors near 2 * 2.83 / sqrt(101) = 0.56. Seeded: the
// truth and the Laplace noise (scale 2, epsilon 0.5) come from PCG(7, 7).
func TestPublishedReleaseCombines(t *testing.T) {
	const k = 101
	rng := rand.New(rand.NewPCG(7, 7))
	truth := make([]float64, k)
	for i := range truth {
		truth[i] = float64(rng.IntN(60))
	}
	var published []release.Release
	for i := 0; i+1 < k; i++ {
		published = append(published, ask(int64(i+1), "publisher", "exact", count("people", or(eq("age", numf(int64(i))), eq("age", numf(int64(i+1))))),
			truth[i]+truth[i+1]))
	}
	hist := ask(5, "mallory", "laplace", grouped(count("people"), "age"), 0)
	hist.Cells = nil
	noisy := make([]float64, k)
	for i := range noisy {
		noisy[i] = truth[i] + 2*(rng.ExpFloat64()-rng.ExpFloat64())
		hist.Cells = append(hist.Cells, release.Cell{Group: []release.Datum{{Text: strconv.Itoa(i)}}, Value: noisy[i], IsFloat: true})
	}
	ordinary := ask(6, "bob", "laplace", count("people", eq("age", num("30"))), 41.3)
	rs := []release.Release{hist, ordinary}

	if got := Assess(rs, Options{}); len(got) != 0 {
		t.Errorf("without the published release: %+v", got)
	}
	reports := Assess(rs, Options{Published: published})
	if len(reports) != 1 || reports[0].Analyst != "mallory" {
		t.Fatalf("reports %+v, want mallory's only", reports)
	}
	// The attack's estimate.
	d := make([]float64, k)
	for i := 1; i < k; i++ {
		d[i] = truth[i-1] + truth[i] - d[i-1]
	}
	x1 := 0.0
	for i := range noisy {
		x1 += altSign(i) * (noisy[i] - d[i]) / k
	}
	fs := reports[0].Findings
	if len(fs) != k {
		t.Fatalf("%d findings, want %d", len(fs), k)
	}
	held := 0
	for _, f := range fs {
		i, _ := strconv.Atoi(f.Cell[0][len("age = "):])
		want := altSign(i)*x1 + d[i]
		if f.Pattern != "linear system" || math.Abs(f.Value-want) > 1e-6 || f.Error < 0.4 || f.Error > 0.7 {
			t.Errorf("%v = %g ± %g, want the attack's %g within about 0.56", f.Cell, f.Value, f.Error, want)
		}
		if len(f.Evidence) != 1 || f.Evidence[0] != 5 || len(f.Published) != k-1 || f.Published[0] != 1 {
			t.Errorf("%v rests on %v and published %d rows", f.Cell, f.Evidence, len(f.Published))
		}
		if math.Abs(f.Value-truth[i]) <= f.Error {
			held++
		}
	}
	// Every count is off by the same |x_1 - truth|: all hold or none.
	if held != 0 && held != k {
		t.Errorf("%d of %d counts hold; the error is common to all", held, k)
	}
}

func altSign(i int) float64 {
	if i%2 == 0 {
		return 1
	}
	return -1
}

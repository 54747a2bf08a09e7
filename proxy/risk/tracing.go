package risk

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// TracingTest is the tracing attack's steps 3 and 4 (Dwork et al. 3.2,
// Figure 1) on released marginals, counts[j] the count of allele 1 at
// attribute j+1 over a table of people: the score of a genome (a string
// of '0' and '1', one per attribute), relative to the reference
// genomes[0] and the centre of the next `centre` genomes, and the
// threshold T, the one given, or (threshold NaN) calibrated at the
// false-positive rate fpr on the genomes left. The attack runs it on the
// marginals it asked; the owner's check of the audit on the marginals an
// analyst was answered.
func TracingTest(genomes []string, people, centre int, fpr, threshold float64, counts []float64) (score func(string) float64, T float64) {
	score = tracingScore(genomes, people, centre, counts)
	return score, tracingThreshold(genomes[1+centre:], fpr, threshold, score)
}

// tracingScore is step 3: the score of a genome against the released
// marginals, relative to the reference z_0 and the references' centre.
func tracingScore(genomes []string, people, centre int, counts []float64) func(string) float64 {
	d := len(counts)
	qhat := make([]float64, d)
	for j, c := range counts {
		qhat[j] = 2*c/float64(people) - 1
	}
	z0 := pm1(genomes[0])
	mid := make([]float64, d)
	if centre > 0 {
		for _, z := range genomes[1 : 1+centre] {
			for j, a := range pm1(z) {
				mid[j] += a / float64(centre)
			}
		}
	}
	return func(g string) float64 {
		var s float64
		for j, a := range pm1(g) {
			s += (a - z0[j]) * (qhat[j] - mid[j])
		}
		return s
	}
}

// tracingThreshold is step 4: the given threshold, or else (NaN) the score
// just above the share 1 - fpr of the calibration genomes.
func tracingThreshold(calibration []string, fpr, threshold float64, score func(string) float64) float64 {
	if !math.IsNaN(threshold) {
		return threshold
	}
	calib := make([]float64, len(calibration))
	for i, z := range calibration {
		calib[i] = score(z)
	}
	slices.Sort(calib)
	T := calib[min(len(calib)-1, int(math.Ceil((1-fpr)*float64(len(calib))))-1)]
	return math.Nextafter(T, math.Inf(1)) // strictly above that share of the references
}

// pm1 is a genome in the +-1 encoding.
func pm1(g string) []float64 {
	out := make([]float64, len(g))
	for j := range g {
		out[j] = float64(2*int(g[j]-'0') - 1)
	}
	return out
}

// chanceLevel is the p-value below which a count of people above the
// tracing threshold is more than the false-positive rate explains.
const chanceLevel = 0.01

// BeyondChance says whether k of n people at or above the tracing test's
// threshold are more than a false-positive rate explains: a one-sided
// binomial test at chanceLevel, P(X >= k) for X ~ Binomial(n, rate).
func BeyondChance(k, n int, rate float64) bool {
	if k == 0 || n == 0 {
		return false
	}
	return distuv.Binomial{N: float64(n), P: rate}.Survival(float64(k-1)) < chanceLevel
}

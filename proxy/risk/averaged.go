package risk

import (
	"fmt"
	"hash/fnv"
	"math"

	"gonum.org/v1/gonum/stat"

	"countwall/proxy/state/release"
)

// averaged finds statements answered many times under fresh noise: the
// mean of the answers is the count within two standard errors
// (averaging). A threshold statement answered many times with noise shows
// its local sensitivity in its answers' spread: under idp a spread that
// matches a sensitivity of 1 at the charged epsilon puts the count within
// one of the threshold (the IDP variance test; idp with plus_one adds one
// to the sensitivity, and the spread then tells 1 from 0 as well).
func averaged(as []answer, o Options) []Finding {
	// A long search's noisy answers are nearly all of cells asked once:
	// counted first by a hash of their key, only the answers of cells
	// asked at least MinRepeats times are grouped by the key itself (a
	// shared hash lets more through, never fewer).
	seen := map[uint64]int32{}
	for _, a := range as {
		if !a.exact {
			seen[repeatHash(a)]++
		}
	}
	groups := map[string][]answer{}
	var order []string
	for _, a := range as {
		if a.exact || seen[repeatHash(a)] < int32(o.MinRepeats) {
			continue
		}
		k := repeatKey(a)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], a)
	}
	clear(seen)
	var out []Finding
	for _, k := range order {
		g := groups[k]
		if len(g) < o.MinRepeats {
			continue
		}
		vals := make([]float64, len(g))
		ids := make([]int64, len(g))
		for i, a := range g {
			vals[i], ids[i] = a.value, a.id
		}
		mean, sd := stat.MeanStdDev(vals, nil)
		if sd == 0 {
			continue // sticky noise: asking again tells nothing new
		}
		first := g[0]
		if first.threshold != nil {
			if f, ok := varianceTest(first, sd, ids, o.IDPPlusOne); ok {
				out = append(out, f)
			}
			continue
		}
		errBound := 2 * sd / math.Sqrt(float64(len(g)))
		if errBound > o.MaxError {
			continue
		}
		out = append(out, estimate("averaging", first.table, first.conj, mean, errBound, ids))
	}
	return out
}

// repeatKey is the statement an answer repeats: its cell and, for a
// threshold, the threshold.
func repeatKey(a answer) string {
	k := a.key()
	if a.threshold != nil {
		k = fmt.Sprintf("%s |>= %d", k, a.threshold.atLeast)
	}
	return k
}

// repeatHash is a hash of repeatKey(a).
func repeatHash(a answer) uint64 {
	h := fnv.New64a()
	h.Write([]byte(repeatKey(a)))
	return h.Sum64()
}

// estimate is a finding of a count within ±errBound, rounded when that
// pins it.
func estimate(pattern, table string, conj []*release.Conjunct, mean, errBound float64, ids []int64) Finding {
	f := finding(pattern, table, conj, mean, ids)
	f.Error = errBound
	if errBound < 0.5 {
		f.Value, f.Error = math.Round(mean), errBound
	}
	f.Individual = f.Error < 0.5 && f.Value == 1
	return f
}

// varianceTest reads a repeated noisy threshold answer's spread: Laplace
// noise of scale s has standard deviation s*sqrt(2), and idp's scale is
// (local sensitivity, plus one with plus_one) / epsilon, so the spread at
// the charged epsilon tells the local sensitivity. A sensitivity of 1 puts
// the count c at b or b+1 for COUNT(*) > b (k = 1); 0 puts it elsewhere.
func varianceTest(a answer, sd float64, ids []int64, plusOne bool) (Finding, bool) {
	if a.epsilon <= 0 || a.mechanism != "idp" {
		return Finding{}, false
	}
	sens := math.Round(sd / math.Sqrt2 * a.epsilon)
	if plusOne {
		sens--
	}
	if sens < 0 || sens > 2 {
		return Finding{}, false
	}
	b := a.threshold.atLeast - 1
	f := finding("idp variance test", a.table, a.conj, sens, ids)
	f.Parameter = fmt.Sprintf("local sensitivity at COUNT(*) > %d (1: the count is %d or %d)", b, b, b+1)
	f.Threshold, f.Individual = b, sens == 1 && b <= 1
	return f, true
}

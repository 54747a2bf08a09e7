package risk

import (
	"math"

	"gonum.org/v1/gonum/stat"

	"countwall/proxy/state/release"
)

// form is one way the analyst wrote the parent P of splits P AND X /
// P AND NOT (X): the sums of each split's two answers, by X.
type form struct {
	table, mechanism string
	conj             []*release.Conjunct
	sums             []float64
	byX              map[string]float64
	ids              []int64
}

// averageForms is split-averaging's estimate: the forms of one cell (P
// written several ways: `age between 30 and 39`, `age >= 30 and age <=
// 39`, an IN list, `age > 29 and age < 40` are one box) are averaged
// together, each form weighted by its splits, as the attack averages every
// sum it asked. Forms whose sums are the same on every split they share
// were one query to the firewall (it normalised them alike, or its noise
// depends on the rows alone) and count once in the error.
//
// The error is two standard errors of that mean: the spread of each
// form's sums over its splits, and, under layered, the noise seeded by P's
// own conditions (SD 1 each, twice in every sum), which no split averages
// away: a condition written alike in several forms (sex = 'F' in all four)
// is one layer shared by them, each other a layer of its own form, so
// more rewritings narrow the error as 1/sqrt of their number, no further.
func averageForms(forms []*form, sp *space, o Options) []Finding {
	byCell := map[string][]*form{}
	var order []string
	for _, f := range forms {
		family, cols := sp.boxOf(f.table, f.conj)
		k := colsKey(family, cols)
		if _, ok := byCell[k]; !ok {
			order = append(order, k)
		}
		byCell[k] = append(byCell[k], f)
	}
	var out []Finding
	for _, k := range order {
		if f, ok := averageCell(byCell[k], o); ok {
			out = append(out, f)
		}
	}
	return out
}

// averageCell is the estimate over the forms of one cell, if its splits
// are enough and their spread small enough.
func averageCell(fs []*form, o Options) (Finding, bool) {
	classes := sameQueries(fs)
	total := 0
	for _, f := range fs {
		total += len(f.sums)
	}
	var mean, statVar float64
	distinct := 0
	layer := map[string]float64{} // condition -> the weight of its layer in the mean
	var ids []int64
	for _, c := range classes {
		w := 0.0
		for _, f := range c {
			w += float64(len(f.sums)) / float64(total)
			mean += float64(len(f.sums)) / float64(total) * stat.Mean(f.sums, nil)
			ids = append(ids, f.ids...)
		}
		rep := c[0]
		distinct += len(rep.sums)
		if n := len(rep.sums); n > 1 {
			statVar += w * w * stat.Variance(rep.sums, nil) / float64(n)
		}
		for _, cond := range rep.conj {
			layer[cond.Text] += w
		}
	}
	errBound := 2 * math.Sqrt(statVar)
	if distinct < o.MinRepeats || statVar == 0 || errBound > o.MaxError {
		return Finding{}, false
	}
	if fs[0].mechanism == "layered" {
		shared := 0.0
		for _, w := range layer {
			shared += 4 * w * w // (2 L) w, L of SD 1
		}
		errBound = 2 * math.Sqrt(statVar+shared)
	}
	return estimate("split-averaging", fs[0].table, fs[0].conj, mean, errBound, ids), true
}

// sameQueries puts forms whose sums agree on every split they share (at
// least one) in one class, in the order first seen.
func sameQueries(fs []*form) [][]*form {
	var classes [][]*form
	for _, f := range fs {
		placed := false
		for i, c := range classes {
			if sameSums(c[0], f) {
				classes[i] = append(c, f)
				placed = true
				break
			}
		}
		if !placed {
			classes = append(classes, []*form{f})
		}
	}
	return classes
}

func sameSums(a, b *form) bool {
	shared := 0
	for x, s := range a.byX {
		if t, ok := b.byX[x]; ok {
			if s != t {
				return false
			}
			shared++
		}
	}
	return shared > 0
}

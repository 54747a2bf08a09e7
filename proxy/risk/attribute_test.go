package risk

import (
	"reflect"
	"testing"

	"countwall/proxy/state/release"
)

// attributeSearch is what idp-attribute sends and is answered under idp
// with k = 1 about the people of the target (suburb = 's1' and age = 65)
// whose incomes are given, over the public domain 0..15: the uniqueness
// check (COUNT(*) > 1, then > 2), then a binary search probing the lower
// half at COUNT(*) > 1 until one value is left. A count of 1 or 2 in the
// half answers noisy (a large float), any other count the exact 0 or 1.
func attributeSearch(incomes ...int64) []release.Release {
	target := []release.Conjunct{eq("suburb", str("s1")), eq("age", num("65"))}
	id := int64(0)
	answer := func(c, b int64) float64 {
		switch {
		case c >= b && c <= b+1:
			return 3.7e9 + float64(id)
		case c > b:
			return 1
		}
		return 0
	}
	var rs []release.Release
	probe := func(c, b int64, where ...release.Conjunct) {
		id++
		q := above(b, count("people", append(append([]release.Conjunct(nil), target...), where...)...))
		rs = append(rs, ask(id, "ann", "idp", q, answer(c, b)))
	}
	count := func(lo, hi int64) (n int64) {
		for _, v := range incomes {
			if v >= lo && v < hi {
				n++
			}
		}
		return n
	}
	n := int64(len(incomes))
	probe(n, 1)
	probe(n, 2)
	lo, hi := int64(0), int64(16)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		c := count(lo, mid)
		if lo == 0 {
			probe(c, 1, lt("income", numf(mid)))
		} else {
			probe(c, 1, ge("income", numf(lo)), lt("income", numf(mid)))
		}
		if c == 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return rs
}

// TestAttributeInferredFromTheSearch: the uniqueness check pins the target
// at one person; each noisy half (1 or 2) inside it holds that one, each
// exact 0 sends the person to the other half, down to one value. The
// target's count of 1 is the uniqueness check's own finding.
func TestAttributeInferredFromTheSearch(t *testing.T) {
	unique := Finding{Pattern: "threshold search", Table: "people", Cell: []string{"suburb = 's1'", "age = 65"}, Value: 1,
		Individual: true, Evidence: []int64{1, 2}}
	for _, tc := range []struct {
		income int64
		cell   string
	}{
		// Halves 0-7 (0), 8-11 (1), 8-9 (0), 10 (0): 11 is the rest of
		// 10-11, never asked.
		{11, "income = 11"},
		// Halves 0-7 (1), 0-3 (1), 0-1 (0), 2 (1): the last probe.
		{2, "income = 2"},
	} {
		got := bare(findings(t, attributeSearch(tc.income), Options{}))
		want := []Finding{{Pattern: "attribute inference", Table: "people", Cell: []string{"suburb = 's1'", "age = 65", tc.cell},
			Value: 1, Individual: true, Evidence: []int64{1, 2, 3, 4, 5, 6}}, unique}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("income %d: %+v\nwant %+v", tc.income, got, want)
		}
	}
}

// TestAttributeNotInferredOfTwo: when the uniqueness check shows two
// people (incomes 3 and 11), a noisy half holds one or two of them and pins
// no one's value: the target's count of 2 is all the answers determine.
func TestAttributeNotInferredOfTwo(t *testing.T) {
	got := bare(findings(t, attributeSearch(3, 11), Options{}))
	want := []Finding{{Pattern: "threshold search", Table: "people", Cell: []string{"suburb = 's1'", "age = 65"}, Value: 2, Evidence: []int64{1, 2}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings %+v\nwant %+v", got, want)
	}
}

// bare drops what Assess adds to each finding (the analyst, the count of
// its evidence).
func bare(fs []Finding) []Finding {
	for i := range fs {
		fs[i].Analyst, fs[i].Statements = "", 0
	}
	return fs
}

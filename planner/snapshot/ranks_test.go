package snapshot

import (
	"testing"

	"countwall/ir"
)

// TestDomainOrder: a domain's values as a column reads them, in SQLite's
// order, with each value's place and the rank a stored value takes.
func TestDomainOrder(t *testing.T) {
	numeric, text := &snapColumn{affinity: affinityNumeric}, &snapColumn{affinity: affinityText}
	intV := func(i int64) dictValue { return dictValue{class: classInt, i: i} }
	textV := func(s string) dictValue { return dictValue{class: classText, s: s} }
	for _, tc := range []struct {
		name     string
		c        *snapColumn
		d        *ir.Domain
		streamed bool // read from the domain itself, not sorted in memory
		n        int
		probe    dictValue
		below    int
		in       bool
	}{
		{"range on a numeric column", numeric, &ir.Domain{IsRange: true, Min: -5, Max: 500000}, true, 500006, intV(100000), 100005, true},
		{"a real between two values", numeric, &ir.Domain{IsRange: true, Min: -5, Max: 500000}, true, 500006, dictValue{class: classReal, f: 2.5}, 8, false},
		{"text sorts after every number", numeric, &ir.Domain{IsRange: true, Min: 0, Max: 300}, true, 301, textV("7"), 301, false},
		{"below the range", numeric, &ir.Domain{IsRange: true, Min: 0, Max: 300}, true, 301, intV(-1), 0, false},
		{"categories in output order", text, &ir.Domain{Categories: []string{"z", "b", "a", "b"}}, false, 3, textV("b"), 1, true},
		{"categories in SQLite's order", text, &ir.Domain{Categories: []string{"a", "b", "z"}}, true, 3, textV("c"), 2, false},
		{"integers a text column cannot read", text, &ir.Domain{IsRange: true, Min: 0, Max: 300}, false, 0, textV("7"), 0, false},
	} {
		o, ok := newDomainOrder(tc.c, tc.d)
		if !ok {
			t.Fatalf("%s: no order", tc.name)
		}
		if o.sorted == tc.streamed || o.n != tc.n {
			t.Errorf("%s: streamed %v, %d values; want %v, %d", tc.name, !o.sorted, o.n, tc.streamed, tc.n)
		}
		if below, in := o.index(tc.probe); below != tc.below || in != tc.in {
			t.Errorf("%s: index %d, %v; want %d, %v", tc.name, below, in, tc.below, tc.in)
		}
	}
}

// TestRankBits: a domain of K values has 2K+1 places, 0..2K.
func TestRankBits(t *testing.T) {
	for _, tc := range []struct{ k, bits int }{{0, 1}, {1, 2}, {2, 3}, {257, 10}, {500001, 20}, {1472421, 22}, {maxRankDomain, 24}} {
		if got := rankBits(tc.k); got != tc.bits {
			t.Errorf("rankBits(%d) = %d, want %d", tc.k, got, tc.bits)
		}
	}
}

package snapshot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
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
		{"the range's last value", numeric, &ir.Domain{IsRange: true, Min: 0, Max: 300}, true, 301, intV(300), 300, true},
		{"above the range", numeric, &ir.Domain{IsRange: true, Min: 0, Max: 300}, true, 301, intV(301), 301, false},
		{"far above a range near the least integer", numeric, &ir.Domain{IsRange: true, Min: math.MinInt64, Max: math.MinInt64 + 9}, true, 10, intV(math.MaxInt64), 10, false},
		{"the least integer itself", numeric, &ir.Domain{IsRange: true, Min: math.MinInt64, Max: math.MinInt64 + 9}, true, 10, intV(math.MinInt64), 0, true},
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
		// index reads an integer range's place arithmetically; the search
		// it stands for must agree.
		if searched := o.below(tc.probe); searched != tc.below {
			t.Errorf("%s: the search places it at %d, want %d", tc.name, searched, tc.below)
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

// TestCodeSlicesAgreeWithScan holds a column of two-byte codes, answered
// from its codes bit-sliced, to the scan of every row's code, true rows and
// false: 3,000 rows of about 700 distinct values (integers, reals between
// them, text, NULLs) and 3,000 seeded conditions whose literals are held,
// absent, below and above the dictionary.
func TestCodeSlicesAgreeWithScan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wide.db")
	fixture.WriteSQL(t, path,
		`CREATE TABLE people (id INTEGER, v INTEGER)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
		 INSERT INTO people SELECT i, CASE WHEN i % 31 = 0 THEN NULL WHEN i % 37 = 0 THEN 't' || (i % 5)
		   WHEN i % 41 = 0 THEN (i % 600) + 0.5 ELSE (i * 7) % 600 * 2 END FROM n`)
	snap := readFile(t, path, "people", "id")
	if c := snap.columns["v"]; c.codes16 == nil {
		t.Fatalf("v's %d values are not two-byte codes", len(c.values))
	}
	table := &ir.Table{Name: "people", PrivacyUnit: "id", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{
		"id": {Name: "id", Type: ir.TypeInt}, "v": {Name: "v", Type: ir.TypeInt},
	}}
	r := rand.New(rand.NewPCG(17, 3))
	lit := func() ir.Literal {
		if r.IntN(10) == 0 {
			return ir.Literal{Kind: ir.LitFloat, Float: float64(r.IntN(1300)-50) + 0.5}
		}
		return ir.Literal{Kind: ir.LitInt, Int: int64(r.IntN(1300) - 50)}
	}
	ops := []string{"=", "<>", "<", "<=", ">", ">="}
	for i := range 3000 {
		var p ir.Pred
		switch r.IntN(3) {
		case 0:
			p = &ir.Compare{Column: "v", Op: ops[r.IntN(len(ops))], Value: lit()}
		case 1:
			p = &ir.Between{Column: "v", Lo: lit(), Hi: lit(), Negate: r.IntN(2) == 0}
		default:
			p = &ir.In{Column: "v", Values: []ir.Literal{lit(), lit(), lit()}, Negate: r.IntN(2) == 0}
		}
		e := newSnapEval(snap, table, ir.Needs{Oblivious: true})
		dt, df, ok := dictLeafOf(e, p)
		if !ok {
			t.Fatalf("condition %d %#v: not answered from the code slices", i, p)
		}
		c, set, negate, _ := e.leafSet(p)
		st, sf := e.scanLeaf(c, set, oneRange(p))
		if negate {
			st, sf = sf, st
		}
		if fmt.Sprint(dt) != fmt.Sprint(st) || fmt.Sprint(df) != fmt.Sprint(sf) {
			t.Errorf("condition %d %#v: slices and scan differ (true %d and %d rows, false %d and %d)", i, p, dt.count(), st.count(), df.count(), sf.count())
		}
		e.release()
	}
}

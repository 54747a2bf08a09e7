package snapshot

import (
	"math/bits"
)

// Way is how a leaf condition finds its rows.
type Way int

const (
	// WayCheapest takes whichever way below the estimates of leafWay find
	// least work.
	WayCheapest Way = iota
	// WayListed sets the rows listed under the condition's codes, and ORs
	// in the row sets of its frequent values, or, for a run of codes, takes
	// the rows between two cuts of the dictionary when that is less work.
	WayListed
	// WayCuts is WayListed taking the cuts wherever they fit.
	WayCuts
	// WayOthers does the same for the non-NULL values the condition does not
	// hold on, and takes the rest: for a condition true on most rows.
	WayOthers
	// WayMasked looks at the masked rows one by one: for the later parts of
	// a conjunction, once few rows are left.
	WayMasked
	// WayScan reads the column's code of every row.
	WayScan
)

// LeafWay is the way every leaf takes; tests set one way at a time, to hold
// each to SQLite's answers.
var LeafWay = WayCheapest

// The estimated work of each way, in quarters of a nanosecond: setting a
// listed row, one word operation of a row set (64 rows), looking at one
// masked row, reading one row's code in a scan.
const (
	costListedRow = 4
	costWord      = 1
	costMaskedRow = 12
	costScanRow   = 6
)

// leafWay picks the way with the least estimated work. The estimates come
// from the dictionary's per-value row counts and the mask, so the way is
// the same for two tables that differ in one unit's rows except where two
// estimates are within that unit's rows of each other.
//
// For WayListed and WayOthers it returns the codes to list (set or its
// others) and how fillListed lists them.
func (e *snapEval) leafWay(c *snapColumn, set codeSet, mask bitset) (Way, codeSet, listing) {
	words := int64(len(mask))
	switch LeafWay {
	case WayCheapest:
	case WayListed, WayCuts:
		_, l := c.planListing(set, words)
		return WayListed, set, l
	case WayOthers:
		others := c.others(set)
		_, l := c.planListing(others, words)
		return WayOthers, others, l
	default:
		return LeafWay, codeSet{}, listing{}
	}
	work, l := c.planListing(set, words)
	way, listed, best := WayListed, set, work+words
	if set.lut == nil { // a LIKE's values are many runs: a scan does better
		others := c.others(set)
		if work, ol := c.planListing(others, words); work+2*words < best {
			way, listed, l, best = WayOthers, others, ol, work+2*words
		}
	}
	if w := costMaskedRow * mask.count(); w < best {
		way, best = WayMasked, w
	}
	if w := costScanRow*int64(e.snap.rows) + words; w < best {
		way = WayScan
	}
	return way, listed, l
}

// leaf evaluates a column condition that is unknown exactly where the column
// is NULL (every literal is non-NULL) on the rows of mask, the way leafWay
// finds cheapest.
func (e *snapEval) leaf(c *snapColumn, set codeSet, negate bool, mask bitset, wantF bool) (t, f bitset) {
	t = e.newSet()
	way, listed, l := e.leafWay(c, set, mask)
	switch way {
	case WayListed:
		c.fillListed(t, listed, l)
		for i := range t {
			t[i] &= mask[i]
		}
	case WayOthers:
		c.fillListed(t, listed, l)
		for i := range t {
			t[i] = mask[i] &^ t[i] &^ c.nulls[i]
		}
	case WayMasked:
		for wi, w := range mask {
			var out uint64
			for w != 0 {
				b := bits.TrailingZeros64(w)
				w &= w - 1
				if set.has(c.code(wi<<6 | b)) {
					out |= 1 << uint(b)
				}
			}
			t[wi] = out
		}
	default:
		lut := set.table(len(c.values))
		switch {
		case c.codes8 != nil:
			fillMatches(t, c.codes8, lut)
		case c.codes16 != nil:
			fillMatches(t, c.codes16, lut)
		default:
			fillMatches(t, c.codes32, lut)
		}
		for i := range t {
			t[i] &= mask[i]
		}
	}
	if !wantF && !negate {
		return t, nil
	}
	f = e.newSet()
	for i := range f {
		f[i] = mask[i] &^ t[i] &^ c.nulls[i]
	}
	if negate {
		t, f = f, t
	}
	return t, f
}

// fillMatches sets the rows whose code the lookup table marks, a word of
// 64 rows at a time without a branch per row.
func fillMatches[C uint8 | uint16 | uint32](t bitset, codes []C, lut []uint64) {
	for wi := range t {
		base := wi << 6
		chunk := codes[base:min(base+64, len(codes))]
		var w uint64
		for j, code := range chunk {
			w |= lut[code] << uint(j)
		}
		t[wi] = w
	}
}

package snapshot

import (
	"countwall/ir"
)

// OneConditionTallies may be turned off by tests, to compare the rows'
// path with it.
var OneConditionTallies = true

// oneConditionTally answers a COUNT whose WHERE is one comparison, BETWEEN,
// IN or LIKE on one column, without GROUP BY, from the column's per-value
// figures (never under Needs.Oblivious: the sums' work grows with the
// values in range): the rows holding each value are counted once per snapshot (and
// their units' keys once per secret), so the attack streams' one-column
// statements cost a few sums over the matching values, however long the
// table. Units and keys need a table keyed by its unit (each unit one row),
// where the units of a set of values are the sum of each value's.
func (snap *Table) oneConditionTally(ev *snapEval, q *ir.Query, unit *snapColumn, keys []uint32, needs ir.Needs, keyed bool) (ir.Cell, bool) {
	if !OneConditionTallies || ev.oblivious || len(q.GroupBy) > 0 || q.Where == nil || !isLeaf(q.Where) || (unit != nil && !keyed) {
		return ir.Cell{}, false
	}
	c, set, negate, ok := ev.leafSet(q.Where)
	if !ok {
		return ir.Cell{}, false
	}
	// A negated condition holds on the non-NULL values outside the set.
	all := codeSet{ranges: []codeRange{{c.firstNonNull(), uint32(len(c.values))}}}
	cell := ir.Cell{InDomain: true, Count: c.rowsIn(set)}
	if negate {
		cell.Count = c.rowsIn(all) - cell.Count
	}
	if unit == nil {
		return cell, true
	}
	t := snap.valueTallies(c, unit, keys)
	units, key := t.sum(set)
	if negate {
		allUnits, allKey := t.sum(all)
		units, key = allUnits-units, allKey-key
	}
	return finishTally(cell, units, key, needs, q.Agg), true
}

// valueTallies are, for one column under one unit column and secret, the
// units and the sum of their keys among the rows holding each value code, as
// running sums over the codes: codes lo..hi-1 have units[hi]-units[lo]
// units (uint32 key sums subtract the same way, mod 2^32).
type valueTallies struct {
	keyed []uint32 // the unit keys these were summed with; nil for units only
	units []int64
	keys  []uint32
}

// talliesKey names one column's tallies under one unit column.
type talliesKey struct{ column, unit string }

// valueTallies returns the column's tallies, computing them on first use
// for this unit column and these keys (one pass over the rows).
func (snap *Table) valueTallies(c, unit *snapColumn, keys []uint32) *valueTallies {
	name := talliesKey{column: c.name, unit: unit.name}
	if v, ok := snap.tallies.Load(name); ok {
		// Keys are one slice per secret (unitKeys), so the same slice means
		// the same secret.
		if t := v.(*valueTallies); keys == nil || (t.keys != nil && &t.keyed[0] == &keys[0]) {
			return t
		}
	}
	t := &valueTallies{units: make([]int64, len(c.values)+1)}
	if keys != nil {
		t.keyed, t.keys = keys, make([]uint32, len(c.values)+1)
	}
	for r := range snap.rows {
		if unit.nulls.has(r) {
			continue
		}
		code := c.code(r)
		t.units[code+1]++
		if keys != nil {
			t.keys[code+1] += keys[unit.code(r)]
		}
	}
	for i := 1; i < len(t.units); i++ {
		t.units[i] += t.units[i-1]
		if t.keys != nil {
			t.keys[i] += t.keys[i-1]
		}
	}
	snap.tallies.Store(name, t)
	return t
}

// sum is the units and key sum of the rows holding a code of the set.
func (t *valueTallies) sum(set codeSet) (units int64, key uint32) {
	set.eachRun(func(lo, hi uint32) {
		units += t.units[hi] - t.units[lo]
		if t.keys != nil {
			key += t.keys[hi] - t.keys[lo]
		}
	})
	return units, key
}

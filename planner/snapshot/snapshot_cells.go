package snapshot

import (
	"countwall/ir"
	"countwall/planner/plan"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// answer computes a query's cells from the snapshot, or returns ok false when
// the snapshot declines the query (SQLite answers it instead). The figures are
// those the compiled SQL would return: counts, distinct non-NULL units and
// contributor keys per cell, cells in SQLite's GROUP BY order, then the same
// domain filling, group limit and ORDER BY as readCells.
func (snap *Table) answer(t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte, shape *plan.Shape) (*ir.Result, bool, error) {
	ev := newSnapEval(snap, needs)
	defer ev.release()
	withUnits := q.Agg == ir.CountDistinct || needs.Units || needs.Key
	var unit *snapColumn
	var keys []uint32
	if withUnits {
		if unit = snap.columns[strings.ToLower(t.PrivacyUnit)]; unit == nil || !unit.countsUnits(needs.Oblivious) {
			return nil, false, nil
		}
		if needs.Key {
			keys = snap.unitKeys(unit, secret)
		}
	}
	groups, ok := snap.groupColumns(t, q)
	if !ok {
		return nil, false, nil
	}

	var cells []ir.Cell
	// A table declared keyed by its unit has one row per unit (checked at
	// start, and here against the snapshot): its units are counted without
	// a set. The declaration, never the rows, picks that path.
	keyed := t.UnitKeyed
	if keyed && !snap.OnePerUnit(t.PrivacyUnit) {
		return nil, true, fmt.Errorf("planner: table %q: %w", t.Name, plan.ErrNotUnitKeyed)
	}
	if cell, ok := snap.oneConditionTally(ev, q, unit, keys, needs, keyed); ok {
		cells = []ir.Cell{cell}
	} else {
		matched, evaluated := ev.matched(q)
		if !evaluated {
			return nil, false, nil
		}
		var answered bool
		if cells, answered = snap.answerRows(matched, groups, unit, keys, needs, q.Agg, keyed); !answered {
			return nil, false, nil
		}
	}
	res, err := snap.result(shape, cells, q, needs)
	return res, true, err
}

// result lays out the snapshot's cells in the answer's shape (refusing more
// groups than the policy allows) with what else needs asks for.
func (snap *Table) result(shape *plan.Shape, cells []ir.Cell, q *ir.Query, needs ir.Needs) (*ir.Result, error) {
	acc := shape.NewAccumulator()
	for _, c := range cells {
		if err := acc.Add(c); err != nil {
			return nil, err
		}
	}
	res := &ir.Result{Cells: acc.Result(), DomainComplete: shape.Complete}
	shape.Order(res.Cells)
	if needs.TableSize {
		res.TableSize = int64(snap.rows)
	}
	if needs.Conditions {
		res.Conditions = plan.Conditions(q)
	}
	return res, nil
}

// groupColumns are q's GROUP BY columns in the snapshot, each with the
// grouping its catalog type reads it by; ok is false when one is missing.
func (snap *Table) groupColumns(t *ir.Table, q *ir.Query) ([]groupColumn, bool) {
	groups := make([]groupColumn, len(q.GroupBy))
	for i, g := range q.GroupBy {
		col := snap.columns[strings.ToLower(g)]
		cat := t.Columns[strings.ToLower(g)]
		if col == nil || cat == nil || col.collated {
			return nil, false
		}
		groups[i] = groupColumn{snapColumn: col, grouping: col.grouping(cat.Type)}
	}
	return groups, true
}

// matched is the rows q's WHERE holds on (every row without one); ok is
// false when the snapshot cannot evaluate it.
func (ev *snapEval) matched(q *ir.Query) (bitset, bool) {
	if q.Where == nil {
		return ev.all, true
	}
	if ev.oblivious {
		tr, _, evaluated := ev.obliviousPred(q.Where)
		return tr, evaluated
	}
	tr, _, evaluated := ev.pred(q.Where, ev.all, false)
	return tr, evaluated
}

// answerRows computes the cells of the matched rows.
func (snap *Table) answerRows(matched bitset, groups []groupColumn, unit *snapColumn, keys []uint32, needs ir.Needs, agg ir.AggKind, keyed bool) ([]ir.Cell, bool) {
	if len(groups) == 0 {
		return []ir.Cell{tallyRows(matched, unit, keys, needs, agg, keyed, snap.runEndsAhead)}, true
	}
	return groupCells(matched, groups, unit, keys, needs, agg, keyed)
}

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

// countsUnits reports whether the snapshot's distinct values of the unit
// column c are SQLite's distinct units. SQLite takes an integer and an
// equal real for one value, which the dictionary keeps apart; only a column
// without a declared type (no affinity) can store both, since a numeric
// column stores an integral real as an integer and a text column stores
// numbers as text. Such a column holding both is left to SQLite; under
// oblivious (the claiming mechanisms) a column without a declared type is
// left to SQLite whatever it holds, so that no stored value decides the
// path.
func (c *snapColumn) countsUnits(oblivious bool) bool {
	switch {
	case c.collated:
		return false
	case c.affinity != affinityBlob:
		return true
	case oblivious:
		return false
	}
	return !(c.has[classInt] && c.has[classReal])
}

// tallyRows counts a row set's rows and, when unit is set, the distinct
// non-NULL units among them with the sum of their record keys: the path of
// every plain COUNT. When each unit value occupies one row (a table keyed by
// its unit), no set of seen units is needed.
func tallyRows(rows bitset, unit *snapColumn, keys []uint32, needs ir.Needs, agg ir.AggKind, keyed bool, endsAhead bitset) ir.Cell {
	c := ir.Cell{InDomain: true, Count: rows.count()}
	if unit == nil {
		return c
	}
	var units int64
	var key uint32
	if keyed {
		for wi, w := range rows {
			units += int64(bits.OnesCount64(w &^ unit.nulls[wi]))
		}
		if keys == nil {
			return finishTally(c, units, key, needs, agg)
		}
		// Each unit is one row: sum the keys of the matching rows, or, when
		// they are most of the table, subtract those of the others from the
		// total (uint32 arithmetic is mod 2^32 both ways). The rows are in
		// the unit's order and no unit is NULL, so row r holds unit code r.
		nonNull := int64(len(unit.codes8)+len(unit.codes16)+len(unit.codes32)) - unit.nulls.count()
		complement := units > nonNull/2
		if complement {
			key = keys[len(keys)-1] // the total, kept after the per-value keys
		}
		for wi, w := range rows {
			if complement {
				w = ^w
				if wi == len(rows)-1 && len(unit.nulls) > 0 {
					w &= lastWordMask(len(unit.codes8) + len(unit.codes16) + len(unit.codes32))
				}
			}
			w &^= unit.nulls[wi]
			for w != 0 {
				k := keys[wi<<6|bits.TrailingZeros64(w)]
				if complement {
					key -= k
				} else {
					key += k
				}
				w &= w - 1
			}
		}
		return finishTally(c, units, key, needs, agg)
	}
	// The rows are in the unit's order: a unit is in the set once for the
	// first of its rows there, which one carry round finds.
	scratch := wordScratch.take(len(rows))
	left := *scratch
	for wi, w := range rows {
		left[wi] = w &^ unit.nulls[wi]
	}
	units, _ = carryRounds(left, endsAhead, 1)
	if keys != nil {
		for wi, w := range rows {
			for first := w &^ unit.nulls[wi] &^ left[wi]; first != 0; first &= first - 1 {
				key += keys[unit.code(wi<<6|bits.TrailingZeros64(first))]
			}
		}
	}
	wordScratch.put(scratch)
	return finishTally(c, units, key, needs, agg)
}

// lastWordMask keeps the bits of the last word that stand for rows.
func lastWordMask(rows int) uint64 {
	if r := rows & 63; r != 0 {
		return 1<<uint(r) - 1
	}
	return ^uint64(0)
}

func finishTally(c ir.Cell, units int64, key uint32, needs ir.Needs, agg ir.AggKind) ir.Cell {
	if agg == ir.CountDistinct {
		c.Count = units
	}
	if needs.Units || needs.Key {
		c.Units = units
	}
	if needs.Key {
		c.Key = key
	}
	return c
}

// groupCells splits the matching rows by the group columns' value codes. The
// dictionaries are in SQLite's sort order, so ascending codes give the cells
// in the order of the compiled SQL's ORDER BY.
func groupCells(matched bitset, groups []groupColumn, unit *snapColumn, keys []uint32, needs ir.Needs, agg ir.AggKind, keyed bool) ([]ir.Cell, bool) {
	radix, ok := groupRadix(groups)
	if !ok {
		return nil, false
	}
	key := func(u uint32) uint32 {
		if keys == nil {
			return 0
		}
		return keys[u]
	}
	if needs.Oblivious && (unit == nil || keyed) {
		return groupCellsOblivious(matched, groups, unit, keys, needs, agg, groups[0].rows()), true
	}
	totals := newCellTotals(radix, 64*len(matched))
	switch {
	case unit == nil: // rows counted, no units
		matched.each(func(r int) { totals.add(groupID(groups, r), 1, 0, 0) })
	case keyed: // each unit one row: its cell has it once
		matched.each(func(r int) {
			u := unit.code(r)
			if unit.values[u].class == classNull {
				totals.add(groupID(groups, r), 1, 0, 0)
				return
			}
			totals.add(groupID(groups, r), 1, 1, key(u))
		})
	default: // each unit's rows one run (Store.Answer sees to it): its cells found in it
		eachUnitCell(matched, unit, groups,
			func(u uint32, gid uint64, rows int64) { totals.add(gid, rows, 1, key(u)) },
			func(gid uint64) { totals.add(gid, 1, 0, 0) })
	}
	return totals.cells(groups, func(c ir.Cell, units int64, key uint32) ir.Cell {
		return finishTally(c, units, key, needs, agg)
	}), true
}

// groupColumn is a GROUP BY column of the snapshot with the grouping its
// catalog type reads it by.
type groupColumn struct {
	*snapColumn
	grouping *grouping
}

// groupValue renders a value as readCells renders what SQLite returns.
func (v dictValue) groupValue() ir.GroupValue {
	switch v.class {
	case classNull:
		return ir.GroupValue{Null: true}
	case classInt:
		return ir.GroupValue{Text: strconv.FormatInt(v.i, 10)}
	case classReal:
		return ir.GroupValue{Text: strconv.FormatFloat(v.f, 'g', -1, 64)}
	}
	return ir.GroupValue{Text: v.s}
}

// unitKeys returns the record key of every value of the unit column under
// secret, computing them once per snapshot and secret.
func (snap *Table) unitKeys(unit *snapColumn, secret []byte) []uint32 {
	if k := snap.keys.Load(); k != nil && k.column == unit.name && k.secret == string(secret) {
		return k.keys
	}
	// One more entry after the per-value keys holds their sum, the key of
	// the whole table when each unit is one row.
	k := &unitKeys{column: unit.name, secret: string(secret), keys: make([]uint32, len(unit.values)+1)}
	for i, v := range unit.values {
		var val any
		switch v.class {
		case classNull:
			continue
		case classInt:
			val = v.i
		case classReal:
			val = v.f
		case classText:
			val = v.s
		default:
			val = []byte(v.s)
		}
		k.keys[i] = plan.RecordKey(secret, val)
		k.keys[len(unit.values)] += k.keys[i]
	}
	snap.keys.Store(k)
	return k.keys
}

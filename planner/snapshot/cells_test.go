package snapshot

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"countwall/ir"
)

// TestCellTotalsDenseAndSparseAgree adds the same seeded totals to cell
// numbers of two group columns (40 x 50 values) in arrays and in a map: the
// cells, their order and their figures must be the same.
func TestCellTotalsDenseAndSparseAgree(t *testing.T) {
	column := func(n int) groupColumn {
		g := &grouping{}
		for i := range n {
			g.values = append(g.values, ir.GroupValue{Text: fmt.Sprint(i)})
		}
		return groupColumn{grouping: g}
	}
	groups := []groupColumn{column(40), column(50)}
	radix, _ := groupRadix(groups)
	dense, sparse := newCellTotals(radix, 1<<20), &cellTotals{sparse: map[uint64]*cellTotal{}}
	if dense.sparse != nil {
		t.Fatalf("%d cells are not totalled in arrays", radix)
	}
	r := rand.New(rand.NewPCG(11, 24))
	for range 500 {
		gid, count, units, key := r.Uint64N(radix), r.Int64N(4), r.Int64N(2), r.Uint32()
		dense.add(gid, count, units, key)
		sparse.add(gid, count, units, key)
	}
	finish := func(c ir.Cell, units int64, key uint32) ir.Cell {
		return finishTally(c, units, key, ir.Needs{Key: true}, ir.CountRows)
	}
	got, want := dense.cells(groups, finish), sparse.cells(groups, finish)
	if len(want) < 300 || !reflect.DeepEqual(got, want) {
		t.Fatalf("arrays gave %d cells, the map %d; first %+v against %+v", len(got), len(want), got[:3], want[:3])
	}
	number := func(c ir.Cell) (n int) {
		var a, b int
		fmt.Sscan(c.Group[0].Text, &a)
		fmt.Sscan(c.Group[1].Text, &b)
		return a*50 + b
	}
	for i := 1; i < len(got); i++ {
		if number(got[i-1]) >= number(got[i]) {
			t.Fatalf("cell %v before %v: not in ascending cell number", got[i-1].Group, got[i].Group)
		}
	}
}

// TestUnitCellsFind: a unit's cells found one by one while few and through
// the map past manyCells give each cell one index, in the order first met,
// across units (the map emptied between them).
func TestUnitCellsFind(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	var u unitCells
	for unit, distinct := range []int{5, manyCells, manyCells + 1, 200, 3} {
		u.reset()
		want := map[uint64]int{}
		for range 1000 {
			gid := r.Uint64N(uint64(distinct)) * 7 // not the indexes themselves
			i, added := u.find(gid)
			j, seen := want[gid]
			if !seen {
				j = len(want)
				want[gid] = j
			}
			if i != j || added == seen {
				t.Fatalf("unit %d (%d cells): find(%d) = %d, %v; want %d, %v", unit, distinct, gid, i, added, j, !seen)
			}
		}
		if len(u.cells) != len(want) {
			t.Fatalf("unit %d: %d cells, want %d", unit, len(u.cells), len(want))
		}
	}
}

package snapshot

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"countwall/ir"
)

// TestBoundedCountWaysAgree builds tables in unit order (runs of 1 to 70
// rows, or up to 300 so that runs span words, some units NULL), matches rows at random
// densities, and holds both per-unit ways of a bounded count to the sum over
// units of min(matching rows, C), for C from 1 to 10 (past maxCarryRounds).
func TestBoundedCountWaysAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 11))
	for trial := range 60 {
		nullRows := 0
		if trial%3 == 0 {
			nullRows = r.IntN(90)
		}
		unit := &snapColumn{prefix: []int32{0}}
		if nullRows > 0 {
			unit.values = append(unit.values, dictValue{class: classNull})
			unit.prefix = append(unit.prefix, int32(nullRows))
		}
		// Some tables' runs span whole words, which a borrow crosses.
		longest := 70
		if trial%4 == 1 {
			longest = 300
		}
		for u := range 1 + r.IntN(40) {
			unit.values = append(unit.values, dictValue{class: classInt, i: int64(u)})
			unit.prefix = append(unit.prefix, unit.prefix[len(unit.prefix)-1]+int32(1+r.IntN(longest)))
		}
		rows := int(unit.prefix[len(unit.prefix)-1])
		matched := newBitset(rows)
		unit.nulls = newBitset(rows)
		for row := range nullRows {
			unit.nulls.set(row)
		}
		density := r.Float64()
		for row := range rows {
			if r.Float64() < density {
				matched.set(row)
			}
		}
		runs := newUnitRuns(unit, rows)
		for perRow := int64(1); perRow <= 10; perRow++ {
			var want ir.Cell
			want.InDomain = true
			for u := int(unit.firstNonNull()); u < len(unit.values); u++ {
				var n int64
				for row := unit.prefix[u]; row < unit.prefix[u+1]; row++ {
					if matched.has(int(row)) {
						n++
					}
				}
				want.Count += min(n, perRow)
				if n > 0 {
					want.Units++
				}
			}
			needs := ir.Needs{Units: true}
			if got := boundedCountByRuns(matched, unit, perRow, needs); !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, C = %d: by runs %+v, want %+v", trial, perRow, got, want)
			}
			if perRow > maxCarryRounds {
				continue
			}
			if got := boundedCountByCarries(matched, runs, perRow, needs); !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, C = %d: by carries %+v, want %+v", trial, perRow, got, want)
			}
			// Without the unit count, a C of four or less takes the kernel
			// that keeps nothing.
			want.Units = 0
			if got := boundedCountByCarries(matched, runs, perRow, ir.Needs{}); !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, C = %d: by carries without units %+v, want %+v", trial, perRow, got, want)
			}
		}
	}
}

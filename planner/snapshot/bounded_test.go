package snapshot

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"countwall/ir"
)

// TestBoundedCountWaysAgree builds tables in unit order (runs of 1 to 70
// rows, so that runs cross words, some units NULL), matches rows at random
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
		for u := range 1 + r.IntN(40) {
			unit.values = append(unit.values, dictValue{class: classInt, i: int64(u)})
			unit.prefix = append(unit.prefix, unit.prefix[len(unit.prefix)-1]+int32(1+r.IntN(70)))
		}
		rows := int(unit.prefix[len(unit.prefix)-1])
		matched, starts := newBitset(rows), newBitset(rows)
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
		for u := int(unit.firstNonNull()) + 1; u <= len(unit.values); u++ {
			starts.set(int(unit.prefix[u]) - 1) // the run ends ahead of this row
		}
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
			if got := boundedCountByCarries(matched, starts, unit.nulls, perRow, needs); !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, C = %d: by carries %+v, want %+v", trial, perRow, got, want)
			}
		}
	}
}

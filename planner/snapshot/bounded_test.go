package snapshot

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"countwall/ir"
)

// TestBoundedCountWaysAgree builds tables in unit order (runs of 1 to 70
// rows, or up to 300 so that runs span words, some units NULL), matches
// rows at random densities, and holds both per-unit ways of a bounded count
// to the sum over units of min(matching rows, C), for C from 1 to 10 (past
// maxRounds).
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
			want, _ := bruteBounded(unit, matched, perRow, nil)
			needs := ir.Needs{Units: true}
			if got := boundedCountByRuns(matched, unit, perRow, needs); !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, C = %d: by runs %+v, want %+v", trial, perRow, got, want)
			}
			if perRow > maxRounds {
				continue
			}
			if got := boundedCountByRounds(matched, runs, perRow, needs); !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, C = %d: by carries %+v, want %+v", trial, perRow, got, want)
			}
			// Without the unit count, a C of four or less takes the kernel
			// that keeps nothing.
			want.Units = 0
			if got := boundedCountByRounds(matched, runs, perRow, ir.Needs{}); !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, C = %d: by carries without units %+v, want %+v", trial, perRow, got, want)
			}
		}
	}
}

// TestRunKernelsAtTheEdges holds the run kernels to the brute-force count
// on the tables where a borrow or the NULL prefix meets a word boundary:
// NULL prefixes of 0, 63, 64, 65 and 128 rows or the whole table, runs of
// one row, of exactly one or two words, and a mix ending at bit 63, with
// every row, no row or every other row matching. For each it checks the
// bounded count for C of 1 to 8, with and without the unit count, and
// tallyRows' distinct units and their record keys' sum (its scratch left
// full of ones, as a pool may hand it back).
func TestRunKernelsAtTheEdges(t *testing.T) {
	runShapes := map[string][]int{
		"no runs": nil, "ones": {1, 1, 1, 1}, "a word each": {64, 64, 64},
		"two words": {128, 1}, "ending at bit 63": {62, 1, 1, 64, 1},
	}
	matchings := map[string]func(row int) bool{
		"all": func(int) bool { return true }, "none": func(int) bool { return false },
		"every other": func(row int) bool { return row%2 == 0 },
	}
	for _, nullRows := range []int{0, 63, 64, 65, 128} {
		for shape, runs := range runShapes {
			for matching, matches := range matchings {
				name := fmt.Sprintf("%d NULL rows, %s, %s", nullRows, shape, matching)
				unit := &snapColumn{prefix: []int32{0}}
				if nullRows > 0 {
					unit.values = append(unit.values, dictValue{class: classNull})
					unit.prefix = append(unit.prefix, int32(nullRows))
				}
				for u, n := range runs {
					unit.values = append(unit.values, dictValue{class: classInt, i: int64(u)})
					unit.prefix = append(unit.prefix, unit.prefix[len(unit.prefix)-1]+int32(n))
				}
				rows := int(unit.prefix[len(unit.prefix)-1])
				unit.nulls, unit.codes32 = newBitset(rows), make([]uint32, rows)
				matched := newBitset(rows)
				keys := make([]uint32, len(unit.values))
				for u := range unit.values {
					keys[u] = uint32(1000 + 7*u)
					for row := unit.prefix[u]; row < unit.prefix[u+1]; row++ {
						unit.codes32[row] = uint32(u)
						if u < int(unit.firstNonNull()) {
							unit.nulls.set(int(row))
						}
						if matches(int(row)) {
							matched.set(int(row))
						}
					}
				}
				runsOf := newUnitRuns(unit, rows)
				for perRow := int64(1); perRow <= maxRounds; perRow++ {
					want, _ := bruteBounded(unit, matched, perRow, keys)
					if got := boundedCountByRounds(matched, runsOf, perRow, ir.Needs{Units: true}); !reflect.DeepEqual(got, want) {
						t.Fatalf("%s, C = %d: %+v, want %+v", name, perRow, got, want)
					}
					if got := boundedCountByRounds(matched, runsOf, perRow, ir.Needs{}); got.Count != want.Count {
						t.Fatalf("%s, C = %d without units: %d, want %d", name, perRow, got.Count, want.Count)
					}
				}
				scratch := wordScratch.take(len(matched))
				for i := range *scratch {
					(*scratch)[i] = ^uint64(0)
				}
				wordScratch.put(scratch)
				got := tallyRows(matched, unit, keys, nil, ir.Needs{Units: true, Key: true}, ir.CountRows, false, runsOf)
				want, wantKey := bruteBounded(unit, matched, 1, keys)
				if got.Units != want.Units || got.Key != wantKey {
					t.Fatalf("%s: tallyRows units %d key %d, want %d and %d", name, got.Units, got.Key, want.Units, wantKey)
				}
			}
		}
	}
}

// bruteBounded is a bounded count the long way: per non-NULL unit, its
// matching rows up to perRow, summed, with the units that have one and
// the sum of their keys (when keys are given).
func bruteBounded(unit *snapColumn, matched bitset, perRow int64, keys []uint32) (ir.Cell, uint32) {
	c := ir.Cell{InDomain: true}
	var key uint32
	for u := int(unit.firstNonNull()); u < len(unit.values); u++ {
		n := int64(0)
		for row := unit.prefix[u]; row < unit.prefix[u+1]; row++ {
			if matched.has(int(row)) {
				n++
			}
		}
		c.Count += min(n, perRow)
		if n > 0 {
			c.Units++
			if keys != nil {
				key += keys[u]
			}
		}
	}
	return c, key
}

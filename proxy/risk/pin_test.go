package risk

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"countwall/proxy/state/release"
)

// searchColumn is a column of the searched table: integers lo..hi-1, or
// the texts of cats when it has any.
type searchColumn struct {
	name   string
	lo, hi int64
	cats   []string
}

func (c searchColumn) value(i int64) release.Constant {
	if c.cats != nil {
		return str(c.cats[i])
	}
	return numf(i)
}

// between is lo <= col < hi, without the conditions the column's ends make
// true.
func (c searchColumn) between(lo, hi int64) []release.Conjunct {
	var out []release.Conjunct
	if lo > c.lo {
		out = append(out, ge(c.name, c.value(lo)))
	}
	if hi < c.hi {
		out = append(out, lt(c.name, c.value(hi)))
	}
	return out
}

// searchHistory is a reconstruction over the wire of a seeded table of
// n rows, asked as idp-reconstruct asks it, on exact counts: the total,
// then column after column, each group of the rows found so far split by
// halves of the column's values (the left half asked, and every third
// right half too, as a search that re-asks does) down to single values.
func searchHistory(n int, seed uint64) ([]release.Release, []searchColumn) {
	cols := []searchColumn{{name: "age", lo: 18, hi: 40}, {name: "job", cats: []string{"admin", "clerk", "nurse", "pilot", "smith"}},
		{name: "day", lo: 1, hi: 32}, {name: "sex", cats: []string{"F", "M"}}}
	for i := range cols {
		if cols[i].cats != nil {
			cols[i].hi = int64(len(cols[i].cats))
		}
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	table := make([][]int64, n)
	for i := range table {
		for _, c := range cols {
			table[i] = append(table[i], c.lo+rng.Int64N(c.hi-c.lo))
		}
	}
	var rs []release.Release
	asked := func(where []release.Conjunct, v int) {
		q := count("bank", slices.Clone(where)...)
		rs = append(rs, ask(int64(len(rs)+1), "alice", "exact", q, float64(v)))
	}
	countOf := func(pins []int64, col int, lo, hi int64) int {
		m := 0
		for _, r := range table {
			if slices.Equal(r[:len(pins)], pins) && r[col] >= lo && r[col] < hi {
				m++
			}
		}
		return m
	}
	asked(nil, n)
	type prefix struct {
		where []release.Conjunct
		pins  []int64
	}
	groups := []prefix{{}}
	for ci, c := range cols {
		var next []prefix
		var split func(p prefix, lo, hi int64, calls int)
		split = func(p prefix, lo, hi int64, calls int) {
			if hi-lo == 1 {
				next = append(next, prefix{append(slices.Clone(p.where), eq(c.name, c.value(lo))), append(slices.Clone(p.pins), lo)})
				return
			}
			mid := (lo + hi) / 2
			left := countOf(p.pins, ci, lo, mid)
			right := countOf(p.pins, ci, mid, hi)
			asked(append(slices.Clone(p.where), c.between(lo, mid)...), left)
			if calls%3 == 2 {
				asked(append(slices.Clone(p.where), c.between(mid, hi)...), right)
			}
			if left > 0 {
				split(p, lo, mid, calls+1)
			}
			if right > 0 {
				split(p, mid, hi, calls+2)
			}
		}
		for _, p := range groups {
			split(p, c.lo, c.hi, 0)
		}
		groups = next
	}
	return rs, cols
}

// TestRowsFindingsPinned pins every finding of a reconstruction over the
// wire (searchHistory) to the digest of their JSON: the solvers' memory
// layout may change, what they find may not.
func TestRowsFindingsPinned(t *testing.T) {
	tests := []struct {
		rows      int
		seed      uint64
		answers   int
		rowsFound int
		findings  int
		digest    string
	}{
		{40, 1, 397, 40, 460, "367dbe8f96c54ec3"},
		{150, 2, 1063, 150, 1284, "99d33d17416ffbf7"},
	}
	for _, tc := range tests {
		rs, cols := searchHistory(tc.rows, tc.seed)
		domains := map[string]Domain{}
		for _, c := range cols {
			domains[c.name] = Domain{Categories: c.cats, Min: c.lo, Max: c.hi - 1}
		}
		reps := Assess(rs, Options{Domains: map[string]map[string]Domain{"bank": domains}})
		if len(reps) != 1 {
			t.Fatalf("%d rows: %d reports, want 1", tc.rows, len(reps))
		}
		rowsFound := 0
		for _, f := range reps[0].Findings {
			if f.Pattern == "row reconstruction" {
				rowsFound++
			}
		}
		js, err := json.Marshal(reps)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(js)
		got := fmt.Sprintf("%d answers, %d rows, %d findings, %s", len(rs), rowsFound, len(reps[0].Findings), hex.EncodeToString(sum[:8]))
		want := fmt.Sprintf("%d answers, %d rows, %d findings, %s", tc.answers, tc.rowsFound, tc.findings, tc.digest)
		if got != want {
			t.Errorf("%d rows, seed %d: %s\nwant %s", tc.rows, tc.seed, got, want)
		}
	}
}

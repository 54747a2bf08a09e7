package risk

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"countwall/proxy/state/release"
)

// TestQuotedNamesReadRight: a table named `my where t` and columns named
// `a and b` and `say "where"` are one name each, read from the structure:
// the history keeps the statements, and the differencing, averaging and
// row solvers find their cells with the names quoted as PostgreSQL reads
// them.
func TestQuotedNamesReadRight(t *testing.T) {
	const table = "my where t"
	target := []release.Conjunct{eq("a and b", str("x y")), gt(`say "where"`, num("60"))}
	rng := rand.New(rand.NewPCG(1, 2))
	var averaged []release.Release
	for i := range 200 {
		averaged = append(averaged, ask(int64(i+1), "q", "bounded", count(table, eq("a and b", str("F"))), float64(7+rng.IntN(5)-2)))
	}
	type found struct {
		pattern, table string
		cell           []string
		value          float64
	}
	for _, tc := range []struct {
		name string
		rs   []release.Release
		want []found
	}{
		{"differencing", []release.Release{
			ask(1, "q", "suppress", count(table), 3000),
			ask(2, "q", "suppress", count(table, nots(target...)), 2997),
		}, []found{{"differencing", table, []string{`"a and b" = 'x y'`, `"say ""where""" > 60`}, 3}}},
		{"averaging", averaged, []found{{"averaging", table, []string{`"a and b" = 'F'`}, 7}}},
		{"rows", rowSearch(table, eq("zip", num("1")), "a and b", `say "where"`), []found{
			{"row reconstruction", table, []string{"zip = 1", `"a and b" = 'F'`, `"say ""where""" = 30`}, 1},
			{"row reconstruction", table, []string{"zip = 1", `"a and b" = 'M'`, `"say ""where""" = 41`}, 2},
		}},
	} {
		h := NewHistory("")
		for _, r := range tc.rs {
			h.Add(r)
		}
		var got []found
		for _, rep := range AssessHistory(h, Options{}) {
			if rep.Answered != len(tc.rs) {
				t.Errorf("%s: %d answered statements read, want %d", tc.name, rep.Answered, len(tc.rs))
			}
			for _, f := range rep.Findings {
				if f.Pattern == tc.want[0].pattern {
					got = append(got, found{f.Pattern, f.Table, f.Cell, f.Value})
				}
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: found %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

package risk

import (
	"reflect"
	"testing"

	"countwall/proxy/state/release"
)

// sumOf makes q SELECT SUM(col) (and COUNT(*) first, when withCount).
func sumOf(q *release.Query, col string, withCount bool) *release.Query {
	if withCount {
		q.Aggregates = append(q.Aggregates, release.Aggregate{Func: "count", Alias: "count"})
	}
	q.Aggregates = append(q.Aggregates, release.Aggregate{Func: "sum", Column: col, Alias: "sum"})
	return q
}

// askSum is one answered statement with sums: one cell per group of
// groups (none: one cell), each with its count and its sum's text ("" for
// NULL).
func askSum(id int64, mech string, q *release.Query, cells ...release.Cell) release.Release {
	r := ask(id, "mallory", mech, q, 0)
	r.Cells = cells
	return r
}

func sumCell(count float64, sum string, group ...string) release.Cell {
	c := release.Cell{Value: count}
	for _, g := range group {
		c.Group = append(c.Group, release.Datum{Text: g})
	}
	d := release.Datum{Text: sum, Null: sum == ""}
	c.Aggregates = []release.Datum{d}
	return c
}

// Two released sums, the total and its complement's, determine a
// person's income when the counts pin the cell to one person; a GROUP BY
// whose one dominated cell was withheld gives it back with its margin.
// Noisy sums determine nothing.
func TestSumsDetermineWithheldCells(t *testing.T) {
	target := []release.Conjunct{eq("suburb", str("suburb_0015")), gt("age", num("60"))}
	type found struct {
		pattern    string
		value      float64
		individual bool
	}
	for _, tc := range []struct {
		name string
		rs   []release.Release
		want []found
	}{
		{"sum differencing", []release.Release{
			askSum(1, "suppress", sumOf(count("people"), "income", false), sumCell(0, "3000000")),
			askSum(2, "suppress", sumOf(count("people", nots(target...)), "income", false), sumCell(0, "2912300")),
		}, []found{{"sum differencing", 87700, false}}},
		{"a person's value", []release.Release{
			askSum(1, "exact", sumOf(count("people"), "income", true), release.Cell{Value: 3000, Aggregates: []release.Datum{{Text: "3000"}, {Text: "3000000"}}}),
			askSum(2, "exact", sumOf(count("people", nots(target...)), "income", false), sumCell(0, "2912300")),
			ask(3, "mallory", "exact", count("people", target...), 1),
		}, []found{{"sum differencing", 87700, true}}},
		{"sum margins", []release.Release{
			askSum(1, "suppress", sumOf(count("people", ge("age", num("18"))), "income", false), sumCell(0, "1000")),
			askSum(2, "suppress", grouped(sumOf(count("people", ge("age", num("18"))), "income", false), "sex"),
				sumCell(0, "400", "F"), sumCell(0, "", "M"), sumCell(0, "100", "X")),
		}, []found{{"sum margins", 500, false}}},
		{"two withheld: secondary suppression holds", []release.Release{
			askSum(1, "suppress", sumOf(count("people"), "income", false), sumCell(0, "1000")),
			askSum(2, "suppress", grouped(sumOf(count("people"), "income", false), "sex"),
				sumCell(0, "400", "F"), sumCell(0, "", "M"), sumCell(0, "", "X")),
		}, nil},
		{"noisy sums", []release.Release{
			askSum(1, "laplace", sumOf(count("people"), "income", false), sumCell(0, "3000012.5")),
			askSum(2, "laplace", sumOf(count("people", nots(target...)), "income", false), sumCell(0, "2912290.25")),
		}, nil},
	} {
		var got []found
		for _, f := range findings(t, tc.rs, Options{}) {
			if f.Sum == "" {
				continue // the count's own findings
			}
			got = append(got, found{f.Pattern, f.Value, f.Individual})
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: found %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// A statement with a COUNT beside its sums is read as a count too.
func TestCountsBesideSumsAreRead(t *testing.T) {
	r := askSum(1, "exact", sumOf(count("people"), "income", true), release.Cell{Value: 7, Aggregates: []release.Datum{{Text: "7"}, {Text: "100"}}})
	as := answers([]release.Release{r})
	if len(as) != 1 || as[0].value != 7 || !as[0].exact {
		t.Errorf("read %+v, want the count 7, exact", as)
	}
	if as := answers([]release.Release{askSum(2, "exact", sumOf(count("people"), "income", false), sumCell(0, "100"))}); len(as) != 0 {
		t.Errorf("a statement of sums alone read as counts: %+v", as)
	}
}

func TestASumFindingSaysItsColumn(t *testing.T) {
	f := Finding{Pattern: "sum margins", Table: "people", Cell: []string{"sex = 'M'", "age >= 18"}, Sum: "income", Value: 500}
	if got, want := f.What(), "sum(income) of people: age >= 18 and sex = 'M' = 500"; got != want {
		t.Errorf("What() = %q, want %q", got, want)
	}
}

package risk

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"countwall/proxy/state/release"
)

// TestBoxesReadRewritesAlike: the ways of writing one set of values are one
// box; a text range between two named constants is the first constant.
func TestBoxesReadRewritesAlike(t *testing.T) {
	cells := [][]string{
		{"sex = 'F'", "age between 30 and 39"},
		{"age >= 30", "age <= 39", "sex = 'F'"},
		{"sex = 'F'", "age in (30, 31, 32, 33, 34, 35, 36, 37, 38, 39)"},
		{"sex >= 'F'", "sex < 'M'", "age > 29", "age < 40"},
		{"sex < 'M'", "age < 40", "age >= 30", "age is not null"},
	}
	var as []answer
	for _, c := range cells {
		as = append(as, answer{table: "people", conj: c})
	}
	sp := newSpace(as)
	var keys []string
	for _, c := range cells {
		family, cols := sp.boxOf("people", c)
		keys = append(keys, colsKey(family, cols))
	}
	for i, k := range keys[1:4] {
		if k != keys[0] {
			t.Errorf("%v read as %s, %v as %s", cells[i+1], k, cells[0], keys[0])
		}
	}
	// sex < 'M' also holds the values below 'F'.
	if keys[4] == keys[0] {
		t.Errorf("%v read as %v", cells[4], cells[0])
	}
	family, cols := sp.boxOf("people", []string{"sex >= 'F'", "sex < 'M'", "age >= 30", "age < 31", "zip <> 3"})
	if got := sp.renderRow("people", cols); !reflect.DeepEqual(got, []string{"sex = 'F'", "age = 30"}) || family != "people where zip <> 3" {
		t.Errorf("rendered %v in family %q", got, family)
	}
}

// TestRowsRebuiltFromSplits: the threshold search's own arithmetic, on
// exact answers. Three rows (F, 30), (M, 41), (M, 41) in zip 1; the
// analyst asks the halves of each split and the ends of sex's values
// (its domain check); the other halves, and so the rows, follow.
func TestRowsRebuiltFromSplits(t *testing.T) {
	answers := []struct {
		where string
		v     float64
	}{
		{"zip = 1", 3},
		{"(zip = 1) and sex < 'M'", 1},
		{"(zip = 1) and sex < 'F'", 0},
		{"(zip = 1) and sex > 'M'", 0},
		{"(zip = 1) and sex < 'M' and age < 30", 0},
		{"(zip = 1) and sex < 'M' and age < 31", 1},
		{"(zip = 1) and sex >= 'M' and age < 41", 0},
		{"(zip = 1) and sex >= 'M' and age < 42", 2},
	}
	var rs []release.Release
	for i, a := range answers {
		rs = append(rs, rel(int64(i+1), "rob", "exact", "select count(*) from people where "+a.where, a.v))
	}
	var got []Finding
	for _, f := range findings(t, rs, Options{}) {
		if f.Pattern == "row reconstruction" {
			got = append(got, f)
		}
	}
	want := []Finding{
		{Pattern: "row reconstruction", Table: "people", Cell: []string{"zip = 1", "sex = 'F'", "age = 30"}, Value: 1, Individual: true,
			Evidence: []int64{3, 5, 6}},
		{Pattern: "row reconstruction", Table: "people", Cell: []string{"zip = 1", "sex = 'M'", "age = 41"}, Value: 2,
			Evidence: []int64{4, 7, 8}},
	}
	if got = bare(got); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %+v\nwant %+v", got, want)
	}
	// Beyond MaxRowsAnswers the solver is not run, and the report says so.
	reps := Assess(rs, Options{MaxRowsAnswers: len(rs) - 1})
	if len(reps) != 1 || reps[0].Skipped == "" {
		t.Fatalf("past the rows limit: %+v, want a report that says the rows were not run", reps)
	}
	for _, f := range reps[0].Findings {
		if f.Pattern == "row reconstruction" {
			t.Errorf("past the rows limit: %+v", f)
		}
	}
	if reps := Assess(rs, Options{MaxRowsAnswers: len(rs)}); len(reps) != 1 || reps[0].Skipped != "" {
		t.Errorf("at the rows limit: %+v, want the rows run", reps)
	}
	// A target of a range keeps its condition as it is.
	ranged := make([]release.Release, len(rs))
	for i, r := range rs {
		ranged[i] = r
		ranged[i].Shape = strings.ReplaceAll(r.Shape, "zip = 1", "zip <= 2")
	}
	var cells [][]string
	for _, f := range findings(t, ranged, Options{}) {
		if f.Pattern == "row reconstruction" {
			cells = append(cells, f.Cell)
		}
	}
	if want := [][]string{{"zip < 3", "sex = 'F'", "age = 30"}, {"zip < 3", "sex = 'M'", "age = 41"}}; !reflect.DeepEqual(cells, want) {
		t.Errorf("rows in a ranged target: %v, want %v", cells, want)
	}
	// Without the domain check at the top, a value above 'M' may hold
	// the two: the second row is not pinned to one value of sex.
	rs = append(rs[:3], rs[4:]...)
	for _, f := range findings(t, rs, Options{}) {
		if f.Pattern == "row reconstruction" && f.Value == 2 {
			t.Errorf("row without its domain check: %+v", f)
		}
	}
}

// TestSplitAveragingOverRewritings: the target written four ways, 50
// splits each, under layered: each sum carries twice the layers of the
// form's conditions (sex = 'F' shared by all four, the age conditions
// each form's own, SD 1) and noise of SD 1.4 per split. The four forms are
// one cell, averaged together: the error is that of the mean over the
// forms, narrower than one form's 4 sqrt(2). A fifth form whose answers
// repeat the first's is the same query to the firewall and adds nothing.
func TestSplitAveragingOverRewritings(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	forms := [][]string{
		{"sex = $1 and age between $2 and $3", "'F", "30", "39"},
		{"sex = $1 and age >= $2 and age <= $3", "'F", "30", "39"},
		{"sex = $1 and age in ($2, $3, $4, $5, $6, $7, $8, $9, $10, $11)", "'F", "30", "31", "32", "33", "34", "35", "36", "37", "38", "39"},
		{"(sex = $1) and (age > $2) and (age < $3)", "'F", "29", "40"},
	}
	sexLayer := rng.NormFloat64()
	var rs []release.Release
	id := int64(0)
	ask := func(f []string, half string, x int, v float64) {
		id++
		consts := append(append([]string(nil), f[1:]...), strconv.Itoa(x))
		n := strconv.Itoa(len(consts))
		rs = append(rs, rel(id, "sam", "layered", "select count(*) from people where ("+f[0]+") and "+half+"income < $"+n+closing(half), v, consts...))
	}
	for _, f := range forms {
		ageLayer := rng.NormFloat64()
		for i := range 50 {
			in := float64(rng.IntN(40))
			shared := sexLayer + ageLayer
			ask(f, "", 10000+1000*i, math.Round(in+shared+rng.NormFloat64()))
			ask(f, "not (", 10000+1000*i, math.Round(40-in+shared+rng.NormFloat64()))
		}
	}
	fs := findings(t, rs, Options{})
	if len(fs) != 1 || fs[0].Pattern != "split-averaging" || len(fs[0].Evidence) != 400 {
		t.Fatalf("findings %+v", fs)
	}
	// 2 sqrt(4 (1 + 6/16)) = 4.69 from the layers, plus the splits' spread.
	if e := fs[0].Error; e < 4.69 || e > 4.8 || math.Abs(fs[0].Value-40) > e {
		t.Errorf("estimate %g ± %g, want 40 within about 4.7", fs[0].Value, e)
	}
	twin := &form{byX: map[string]float64{"a": 1, "b": 2}}
	other := &form{byX: map[string]float64{"a": 1, "b": 3}}
	same := &form{byX: map[string]float64{"b": 2, "c": 7}}
	if got := sameQueries([]*form{twin, other, same}); len(got) != 2 || len(got[0]) != 2 || got[0][1] != same {
		t.Errorf("classes %v", got)
	}
}

func closing(half string) string {
	if half == "" {
		return ""
	}
	return ")"
}

// TestDistinctKeepsTheRow: a cell a row also determines, written another
// way, to the same value, gives way to the row; other findings stay, two
// of one cell from other solvers included.
func TestDistinctKeepsTheRow(t *testing.T) {
	search := Finding{Pattern: "threshold search", Table: "people", Cell: []string{"age >= 30", "age < 31", "sex = 'F'"}, Value: 1}
	other := Finding{Pattern: "threshold search", Table: "people", Cell: []string{"age = 31", "sex = 'F'"}, Value: 1}
	flagged := Finding{Pattern: "tracing", Table: "people", Cell: []string{"sex = 'F'"}, Value: 3}
	row := Finding{Pattern: "row reconstruction", Table: "people", Cell: []string{"sex = 'F'", "age = 30"}, Value: 1}
	var as []answer
	for _, f := range []Finding{search, other, row} {
		as = append(as, answer{table: "people", conj: f.Cell})
	}
	got := distinct([]Finding{search, other, flagged, flagged, row}, newSpace(as))
	if want := []Finding{row, other, flagged, flagged}; !reflect.DeepEqual(got, want) {
		t.Errorf("distinct: %+v\nwant %+v", got, want)
	}
}

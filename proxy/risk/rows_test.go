package risk

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"countwall/proxy/state/release"
)

// TestBoxesReadRewritesAlike: the ways of writing one set of values are one
// box; a text range between two named constants is the first constant.
func TestBoxesReadRewritesAlike(t *testing.T) {
	var ages []release.Constant
	for a := range 10 {
		ages = append(ages, numf(int64(30+a)))
	}
	cells := [][]*release.Conjunct{
		conds(eq("sex", str("F")), between("age", num("30"), num("39"))),
		conds(ge("age", num("30")), le("age", num("39")), eq("sex", str("F"))),
		conds(eq("sex", str("F")), in("age", ages...)),
		conds(ge("sex", str("F")), lt("sex", str("M")), gt("age", num("29")), lt("age", num("40"))),
		conds(lt("sex", str("M")), lt("age", num("40")), ge("age", num("30")), release.IsNull("age", true)),
	}
	var as []answer
	for _, c := range cells {
		as = append(as, answer{kind: &kind{table: "people"}, conj: c})
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
	family, cols := sp.boxOf("people", conds(ge("sex", str("F")), lt("sex", str("M")), ge("age", num("30")), lt("age", num("31")), ne("zip", num("3"))))
	if got := texts(sp.renderRow("people", cols)); !reflect.DeepEqual(got, []string{"sex = 'F'", "age = 30"}) || family != "people where zip <> 3" {
		t.Errorf("rendered %v in family %q", got, family)
	}
}

// rowSearch is the threshold search's arithmetic on exact answers over
// three rows of table in target, (F, 30), (M, 41) and (M, 41) in the
// columns text and num: the analyst asks the halves of each split and the
// ends of text's values (its domain check); the other halves, and so the
// rows, follow.
func rowSearch(table string, target release.Conjunct, text, num string) []release.Release {
	n := func(v string) release.Constant { return release.Constant{Text: v} }
	answers := []struct {
		where []release.Conjunct
		v     float64
	}{
		{nil, 3},
		{[]release.Conjunct{lt(text, str("M"))}, 1},
		{[]release.Conjunct{lt(text, str("F"))}, 0},
		{[]release.Conjunct{gt(text, str("M"))}, 0},
		{[]release.Conjunct{lt(text, str("M")), lt(num, n("30"))}, 0},
		{[]release.Conjunct{lt(text, str("M")), lt(num, n("31"))}, 1},
		{[]release.Conjunct{ge(text, str("M")), lt(num, n("41"))}, 0},
		{[]release.Conjunct{ge(text, str("M")), lt(num, n("42"))}, 2},
	}
	var rs []release.Release
	for i, a := range answers {
		rs = append(rs, ask(int64(i+1), "rob", "exact", count(table, append([]release.Conjunct{target}, a.where...)...), a.v))
	}
	return rs
}

// TestRowsRebuiltFromSplits: the threshold search's own arithmetic, on
// exact answers (rowSearch), in zip 1.
func TestRowsRebuiltFromSplits(t *testing.T) {
	rs := rowSearch("people", eq("zip", num("1")), "sex", "age")
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
	ranged := rowSearch("people", le("zip", num("2")), "sex", "age")
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
	var ages []release.Constant
	for a := range 10 {
		ages = append(ages, numf(int64(30+a)))
	}
	sex := eq("sex", str("F"))
	forms := [][]release.Conjunct{
		{sex, between("age", num("30"), num("39"))},
		{sex, ge("age", num("30")), le("age", num("39"))},
		{sex, in("age", ages...)},
		{sex, gt("age", num("29")), lt("age", num("40"))},
	}
	sexLayer := rng.NormFloat64()
	var rs []release.Release
	id := int64(0)
	split := func(f []release.Conjunct, half release.Conjunct, v float64) {
		id++
		rs = append(rs, ask(id, "sam", "layered", count("people", append(append([]release.Conjunct(nil), f...), half)...), v))
	}
	for _, f := range forms {
		ageLayer := rng.NormFloat64()
		for i := range 50 {
			in := float64(rng.IntN(40))
			shared := sexLayer + ageLayer
			x := numf(int64(10000 + 1000*i))
			split(f, lt("income", x), math.Round(in+shared+rng.NormFloat64()))
			split(f, ge("income", x), math.Round(40-in+shared+rng.NormFloat64())) // NOT (income < x), folded
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

// TestDistinctKeepsTheRow: a cell a row also determines, written another
// way, to the same value, gives way to the row; other findings stay, two
// of one cell from other solvers included.
func TestDistinctKeepsTheRow(t *testing.T) {
	sex := eq("sex", str("F"))
	search := finding("threshold search", "people", conds(ge("age", num("30")), lt("age", num("31")), sex), 1, nil)
	other := finding("threshold search", "people", conds(eq("age", num("31")), sex), 1, nil)
	flagged := finding("tracing", "people", conds(sex), 3, nil)
	row := finding("row reconstruction", "people", conds(sex, eq("age", num("30"))), 1, nil)
	var as []answer
	for _, f := range []Finding{search, other, row} {
		as = append(as, answer{kind: &kind{table: "people"}, conj: f.conj})
	}
	got := distinct([]Finding{search, other, flagged, flagged, row}, newSpace(as))
	if want := []Finding{row, other, flagged, flagged}; !reflect.DeepEqual(got, want) {
		t.Errorf("distinct: %+v\nwant %+v", got, want)
	}
}

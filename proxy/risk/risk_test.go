package risk

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"countwall/proxy/state/release"
)

// TestAnswersReadTheStructure: each released cell is an answer whose
// conditions are the query's conjuncts, nested conjunctions opened, and a
// GROUP BY row's values as equalities; a name holding " and " or
// " where " is one name. A statement without its structured record gives
// no answer and is counted unread.
func TestAnswersReadTheStructure(t *testing.T) {
	type read struct {
		table   string
		conj    []string
		atLeast int64 // 0: no threshold
	}
	for _, tc := range []struct {
		q     *release.Query
		cells []release.Cell
		want  []read
	}{
		{count("people"), nil, []read{{table: "people", conj: []string{}}}},
		{above(3, count("people", le("zip", num("2009")), between("age", num("30"), num("39")))), nil,
			[]read{{"people", []string{"zip <= 2009", "age between 30 and 39"}, 4}}},
		{above(1, count("t", nots(eq("a", str("x y")), gt("b", num("1"))))), nil,
			[]read{{"t", []string{"not (a = 'x y' and b > 1)"}, 2}}},
		{grouped(count("people", ge("age", num("18"))), "sex"),
			[]release.Cell{{Group: []release.Datum{{Text: "F"}}, Value: 9}, {Group: []release.Datum{{Null: true}}, Value: 2}},
			[]read{{table: "people", conj: []string{"age >= 18", "sex = 'F'"}}, {table: "people", conj: []string{"age >= 18", "sex is null"}}}},
		{count("people", release.And([]release.Conjunct{eq("a", num("1")), eq("b", num("2"))}), or(in("c", num("3"), num("4")), in("c", num("5")))), nil,
			[]read{{table: "people", conj: []string{"a = 1", "b = 2", "c in (3, 4) or c in (5)"}}}},
		{count("my where t", eq("a and b", num("1")), gt("age", num("2"))), nil,
			[]read{{table: "my where t", conj: []string{`"a and b" = 1`, "age > 2"}}}},
	} {
		r := ask(1, "a", "exact", tc.q, 0)
		if tc.cells != nil {
			r.Cells = tc.cells
		}
		var got []read
		for _, a := range answers([]release.Release{r}) {
			rd := read{table: a.table, conj: texts(a.conj)}
			if a.threshold != nil {
				rd.atLeast = a.threshold.atLeast
			}
			got = append(got, rd)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: read %+v, want %+v", shapeOf(tc.q), got, tc.want)
		}
	}
	old := ask(2, "a", "exact", count("people"), 3)
	old.Query = nil
	refused := release.Release{ID: 3, Analyst: "a", Kind: "query", Outcome: "refused"}
	h := HistoryOf([]release.Release{old, refused, ask(4, "a", "exact", count("people"), 3)}, "")
	if as := h.answersOf("a"); len(as) != 1 || as[0].id != 4 || h.Unread() != 1 {
		t.Errorf("answers %+v, %d unread; want the structured one only and one unread", as, h.Unread())
	}
}

// findings is Assess for one analyst.
func findings(t *testing.T, rs []release.Release, o Options) []Finding {
	t.Helper()
	reps := Assess(rs, o)
	if len(reps) == 0 {
		return nil
	}
	if len(reps) != 1 {
		t.Fatalf("%d analysts reported, want 1", len(reps))
	}
	return reps[0].Findings
}

func TestDifferencingPinsTheTarget(t *testing.T) {
	rs := []release.Release{
		ask(1, "mallory", "suppress", count("people"), 3000),
		ask(2, "mallory", "suppress", count("people", nots(eq("suburb", str("suburb_0015")), gt("age", num("60")))), 2997),
	}
	fs := findings(t, rs, Options{})
	var diff *Finding
	for i := range fs {
		if fs[i].Pattern == "differencing" {
			diff = &fs[i]
		}
	}
	if diff == nil || diff.Value != 3 || diff.Error != 0 || !reflect.DeepEqual(diff.Cell, []string{"suburb = 'suburb_0015'", "age > 60"}) ||
		!reflect.DeepEqual(diff.Evidence, []int64{1, 2}) {
		t.Fatalf("differencing finding %+v (all: %+v)", diff, fs)
	}
}

// TestDifferencingReadsAFoldedNot: the planner folds NOT (age > 60) into
// age <= 60. Two exact counts, the total and that one, difference to the
// count of age > 60; two threshold searches pinning the same counts do
// not (a search's halves are the rows solver's).
func TestDifferencingReadsAFoldedNot(t *testing.T) {
	folded := count("people", le("age", num("60")))
	for _, tc := range []struct {
		name string
		rs   []release.Release
		want []string // the patterns found
	}{
		{"exact counts", []release.Release{
			ask(1, "m", "suppress", count("people"), 3000),
			ask(2, "m", "suppress", folded, 2997),
		}, []string{"differencing"}},
		{"threshold searches", []release.Release{
			ask(1, "m", "exact", above(2, count("people")), 1),
			ask(2, "m", "exact", above(3, count("people")), 0),
			ask(3, "m", "exact", above(0, count("people", le("age", num("60")))), 1),
			ask(4, "m", "exact", above(1, count("people", le("age", num("60")))), 0),
		}, []string{"threshold search", "threshold search"}},
	} {
		var got []string
		for _, f := range findings(t, tc.rs, Options{}) {
			got = append(got, f.Pattern)
			if f.Pattern == "differencing" && (f.Value != 3 || !reflect.DeepEqual(f.Cell, []string{"age > 60"}) || !reflect.DeepEqual(f.Evidence, []int64{1, 2})) {
				t.Errorf("%s: %+v", tc.name, f)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: patterns %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestThresholdSearchUnderIDP: under idp with k = 1, COUNT(*) > b is
// noisy exactly when b is c-1 or c, and exact otherwise. count > 0
// exactly 1 (c >= 2) and count > 1 noisy (c is 1 or 2): the count is 2.
// count > 0 and count > 1 both noisy: one person (the membership test).
// A single noisy answer pins nothing.
func TestThresholdSearchUnderIDP(t *testing.T) {
	q := func(b int64, suburb, age string) *release.Query {
		return above(b, count("people", eq("suburb", str(suburb)), eq("age", num(age))))
	}
	rs := []release.Release{
		ask(1, "eve", "idp", q(0, "s1", "40"), 1),
		ask(2, "eve", "idp", q(1, "s1", "40"), 4.1e9),
		ask(3, "eve", "idp", q(3, "s1", "40"), 0),
		ask(4, "eve", "idp", q(0, "s2", "41"), 3.3e9),
		ask(5, "eve", "idp", q(1, "s2", "41"), -1.5e9),
		ask(6, "eve", "idp", q(3, "s3", "42"), -2.2e9), // alone: 3 or 4, not pinned
	}
	fs := findings(t, rs, Options{})
	want := map[string]float64{"people where age = 40 and suburb = 's1'": 2, "people where age = 41 and suburb = 's2'": 1}
	if len(fs) != 2 {
		t.Fatalf("findings %+v, want 2", fs)
	}
	for _, f := range fs {
		if v, ok := want[cellKey(f.Table, f.Cell)]; !ok || f.Value != v || f.Individual != (v == 1) {
			t.Errorf("finding %+v", f)
		}
	}
}

// TestAveragingFreshNoise: 200 answers of one count under uniform noise on
// -2..2 (sd 1.41): two standard errors are 0.2, so the rounded mean is the
// count. Seeded; a wrong rounding needs the mean 2.5 standard errors off,
// probability about 1%, but the seed fixes the outcome.
func TestAveragingFreshNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var rs []release.Release
	for i := range 200 {
		rs = append(rs, ask(int64(i+1), "bob", "bounded", count("people", eq("sex", str("F")), between("age", num("40"), num("44"))),
			float64(7+rng.IntN(5)-2)))
	}
	fs := findings(t, rs, Options{})
	if len(fs) != 1 || fs[0].Pattern != "averaging" || fs[0].Value != 7 || fs[0].Error >= 0.5 || len(fs[0].Evidence) != 200 {
		t.Fatalf("findings %+v", fs)
	}
}

// TestSplitAveragingStickyNoise: sticky noise repeats itself, so asking
// one cell again finds nothing, but 150 splits of one condition, each half
// with its own noise on -2..2, average to its count (two standard errors
// 0.33).
func TestSplitAveragingStickyNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var rs []release.Release
	id := int64(0)
	next := func() int64 { id++; return id }
	for range 20 {
		rs = append(rs, ask(next(), "carol", "cellkey", count("people", eq("sex", str("F"))), 1510))
	}
	for i := range 150 {
		x := numf(int64(10000 + 1000*i))
		in := float64(rng.IntN(12))
		target := []release.Conjunct{eq("sex", str("F")), between("age", num("30"), num("39"))}
		rs = append(rs,
			ask(next(), "carol", "cellkey", count("people", append(target, lt("income", x))...), in+float64(rng.IntN(5)-2)),
			ask(next(), "carol", "cellkey", count("people", append(target, ge("income", x))...), 12-in+float64(rng.IntN(5)-2)))
	}
	fs := findings(t, rs, Options{})
	if len(fs) != 1 || fs[0].Pattern != "split-averaging" || fs[0].Value != 12 ||
		!reflect.DeepEqual(fs[0].Cell, []string{"sex = 'F'", "age between 30 and 39"}) {
		t.Fatalf("findings %+v", fs)
	}
	// Under layered, the layers seeded by the condition's two conditions
	// are shared by every split: the error says so.
	for i := range rs {
		rs[i].Mechanism = "layered"
	}
	fs = findings(t, rs, Options{})
	if len(fs) != 1 || fs[0].Error < 4*math.Sqrt2 || math.Abs(fs[0].Value-12) > fs[0].Error {
		t.Fatalf("under layered: %+v", fs)
	}
}

// TestLinearSystemOfTwoPartitions: sums of a column's values over random
// halves of its domain, each with noise on -2..2, solve for each value's
// count (the noise remover's two-partitions); 400 sums of 8 unknowns.
func TestLinearSystemOfTwoPartitions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	truth := []float64{3, 0, 12, 5, 1, 9, 4, 7}
	var rs []release.Release
	for i := range 400 {
		var ages []release.Constant
		sum := 0.0
		for v := range truth {
			if rng.IntN(2) == 0 {
				continue
			}
			ages = append(ages, numf(int64(20+v)))
			sum += truth[v]
		}
		if len(ages) < 2 {
			continue
		}
		rs = append(rs, ask(int64(i+1), "dan", "cellkey", count("people", eq("sex", str("F")), in("age", ages...)), sum+float64(rng.IntN(5)-2)))
	}
	fs := findings(t, rs, Options{})
	got := map[string]float64{}
	for _, f := range fs {
		if f.Pattern != "linear system" || f.Error >= 0.5 {
			t.Errorf("finding %+v", f)
		}
		got[f.Cell[1]] = f.Value
	}
	for v, want := range truth {
		if g, ok := got["age = "+strconv.Itoa(20+v)]; !ok || g != want {
			t.Errorf("age %d: recovered %v (%v), want %v", 20+v, g, ok, want)
		}
	}
}

// TestVarianceTestUnderPlusOne: one threshold statement asked 100 times
// under idp with plus_one; Laplace noise of scale (1+1)/epsilon says the
// local sensitivity is 1, scale 1/epsilon says 0.
func TestVarianceTestUnderPlusOne(t *testing.T) {
	for _, sens := range []float64{0, 1} {
		rng := rand.New(rand.NewPCG(7, uint64(sens)))
		var rs []release.Release
		for i := range 100 {
			scale := (sens + 1) / 1e-10
			u := rng.Float64() - 0.5
			noise := -scale * math.Copysign(math.Log(1-2*math.Abs(u)), u)
			rs = append(rs, ask(int64(i+1), "vic", "idp", above(1, count("people", eq("suburb", str("s9")))), 1+noise))
		}
		fs := findings(t, rs, Options{IDPPlusOne: true})
		if len(fs) != 1 || fs[0].Pattern != "idp variance test" || fs[0].Value != sens || fs[0].Threshold != 1 {
			t.Errorf("sensitivity %g: findings %+v", sens, fs)
		}
	}
}

// TestOrdinaryQueriesDetermineNothing: an analyst who asks a handful of
// different counts and groupings, each once, under noise, is not reported.
func TestOrdinaryQueriesDetermineNothing(t *testing.T) {
	var rs []release.Release
	target := []release.Conjunct{eq("suburb", str("suburb_0015")), gt("age", num("60"))}
	for i, q := range []struct {
		q *release.Query
		v float64
	}{
		{count("people"), 20003},
		{count("people", gt("age", num("60"))), 4120},
		{count("people", target...), 3},
		{count("people", nots(target...)), 19998},
		{grouped(count("people"), "sex"), 0},
	} {
		r := ask(int64(i+1), "demo", "cellkey", q.q, q.v)
		if len(q.q.GroupBy) > 0 {
			r.Cells = []release.Cell{{Group: []release.Datum{{Text: "F"}}, Value: 10012}, {Group: []release.Datum{{Text: "M"}}, Value: 9990}}
		}
		rs = append(rs, r)
	}
	if reps := Assess(rs, Options{}); len(reps) != 0 {
		t.Fatalf("ordinary queries reported: %+v", reps)
	}
	// Under bdp a noisy count says its cell is neither empty nor full, and
	// an exact 0 that it is empty: from one-off questions neither is
	// reported; from a search over 12 combinations both are.
	for i := range rs {
		rs[i].Mechanism = "bdp"
	}
	rs[2].Cells[0].Value = 0
	if reps := Assess(rs, Options{}); len(reps) != 0 {
		t.Fatalf("ordinary queries under bdp reported: %+v", reps)
	}
	var search []release.Release
	for i := range 12 {
		v := 3.7e9
		if i%3 == 0 {
			v = 0
		}
		search = append(search, ask(int64(i+1), "demo", "bdp", count("people", eq("education", str("e"+strconv.Itoa(i))), eq("occupation", str("o"))), v))
	}
	fs := findings(t, search, Options{})
	if got := PatternCounts(fs); got != "bdp existence 8, exact answer 4" {
		t.Errorf("bdp search: %s", got)
	}
}

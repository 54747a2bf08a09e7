package risk

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"countwall/proxy/state/release"
)

// rel is one answered statement: its shape, its constants as text (a
// leading ' marks a string) and the value sent.
func rel(id int64, analyst, mech, shape string, value float64, consts ...string) release.Release {
	r := release.Release{ID: id, Analyst: analyst, Kind: "query", Mechanism: mech, Outcome: "answered", Shape: shape,
		Cells: []release.Cell{{Value: value, IsFloat: mech == "idp" || mech == "bdp"}}}
	if mech == "idp" || mech == "bdp" {
		r.Epsilon = 1e-10
	}
	for _, c := range consts {
		if c[0] == '\'' {
			r.Constants = append(r.Constants, release.Constant{Text: c[1:], String: true})
		} else {
			r.Constants = append(r.Constants, release.Constant{Text: c})
		}
	}
	return r
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		shape  string
		consts []string
		want   parsed
	}{
		{"select count(*) from people", nil, parsed{table: "people"}},
		{"select count(*) > $1 from people where (zip <= $2) and age between $3 and $4", []string{"3", "2009", "30", "39"},
			parsed{table: "people", conj: []string{"zip <= 2009", "age between 30 and 39"}, threshold: &threshold{atLeast: 4}}},
		{"select count(*) >= $1 from t where not (a = $2 and b > $3)", []string{"2", "'x y", "1"},
			parsed{table: "t", conj: []string{"not (a = 'x y' and b > 1)"}, threshold: &threshold{atLeast: 2}}},
		{"select sex, count(*) from people where age >= $1 group by sex order by sex", []string{"18"},
			parsed{table: "people", conj: []string{"age >= 18"}, groupBy: []string{"sex"}}},
		{"select count(*) from people where ((a = $1 and b = $2)) and (c in ($3, $4) or c in ($5))", []string{"1", "2", "3", "4", "5"},
			parsed{table: "people", conj: []string{"a = 1", "b = 2", "c in (3, 4) or c in (5)"}}},
	} {
		r := rel(1, "a", "exact", tc.shape, 0, tc.consts...)
		got, ok := parse(r)
		if !ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parse(%q) = %+v, %v; want %+v", tc.shape, got, ok, tc.want)
		}
	}
	for _, shape := range []string{"show budget", "select sum(age) from people", "select a, b, count(*) from people group by a"} {
		if _, ok := parse(rel(1, "a", "exact", shape, 0)); ok {
			t.Errorf("parse(%q) accepted a statement the solvers do not read", shape)
		}
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
		rel(1, "mallory", "suppress", "select count(*) from people", 3000),
		rel(2, "mallory", "suppress", "select count(*) from people where not (suburb = $1 and age > $2)", 2997, "'suburb_0015", "60"),
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

// TestThresholdSearchUnderIDP: under idp with k = 1, COUNT(*) > b is
// noisy exactly when b is c-1 or c, and exact otherwise. count > 0
// exactly 1 (c >= 2) and count > 1 noisy (c is 1 or 2): the count is 2.
// count > 0 and count > 1 both noisy: one person (the membership test).
// A single noisy answer pins nothing.
func TestThresholdSearchUnderIDP(t *testing.T) {
	shape := "select count(*) > $1 from people where suburb = $2 and age = $3"
	rs := []release.Release{
		rel(1, "eve", "idp", shape, 1, "0", "'s1", "40"),
		rel(2, "eve", "idp", shape, 4.1e9, "1", "'s1", "40"),
		rel(3, "eve", "idp", shape, 0, "3", "'s1", "40"),
		rel(4, "eve", "idp", shape, 3.3e9, "0", "'s2", "41"),
		rel(5, "eve", "idp", shape, -1.5e9, "1", "'s2", "41"),
		rel(6, "eve", "idp", shape, -2.2e9, "3", "'s3", "42"), // alone: 3 or 4, not pinned
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
		rs = append(rs, rel(int64(i+1), "bob", "bounded", "select count(*) from people where sex = $1 and age between $2 and $3",
			float64(7+rng.IntN(5)-2), "'F", "40", "44"))
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
		rs = append(rs, rel(next(), "carol", "cellkey", "select count(*) from people where sex = $1", 1510, "'F"))
	}
	for i := range 150 {
		x := 10000 + 1000*i
		in := float64(rng.IntN(12))
		rs = append(rs,
			rel(next(), "carol", "cellkey", "select count(*) from people where (sex = $1 and age between $2 and $3) and income < $4", in+float64(rng.IntN(5)-2), "'F", "30", "39", strconv.Itoa(x)),
			rel(next(), "carol", "cellkey", "select count(*) from people where (sex = $1 and age between $2 and $3) and not (income < $4)", 12-in+float64(rng.IntN(5)-2), "'F", "30", "39", strconv.Itoa(x)))
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
		var consts []string
		sum := 0.0
		shape := "select count(*) from people where (sex = $1) and age in ("
		consts = append(consts, "'F")
		for v := range truth {
			if rng.IntN(2) == 0 {
				continue
			}
			if len(consts) > 1 {
				shape += ", "
			}
			consts = append(consts, strconv.Itoa(20+v))
			shape += "$" + strconv.Itoa(len(consts))
			sum += truth[v]
		}
		if len(consts) < 3 {
			continue
		}
		rs = append(rs, rel(int64(i+1), "dan", "cellkey", shape+")", sum+float64(rng.IntN(5)-2), consts...))
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
			rs = append(rs, rel(int64(i+1), "vic", "idp", "select count(*) > $1 from people where suburb = $2", 1+noise, "1", "'s9"))
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
	for i, q := range []struct {
		shape  string
		consts []string
		v      float64
	}{
		{"select count(*) from people", nil, 20003},
		{"select count(*) from people where age > $1", []string{"60"}, 4120},
		{"select count(*) from people where suburb = $1 and age > $2", []string{"'suburb_0015", "60"}, 3},
		{"select count(*) from people where not (suburb = $1 and age > $2)", []string{"'suburb_0015", "60"}, 19998},
		{"select sex, count(*) from people group by sex", nil, 0},
	} {
		r := rel(int64(i+1), "demo", "cellkey", q.shape, q.v, q.consts...)
		if q.shape == "select sex, count(*) from people group by sex" {
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
		search = append(search, rel(int64(i+1), "demo", "bdp", "select count(*) from people where education = $1 and occupation = $2", v, "'e"+strconv.Itoa(i), "'o"))
	}
	fs := findings(t, search, Options{})
	if got := PatternCounts(fs); got != "bdp existence 8, exact answer 4" {
		t.Errorf("bdp search: %s", got)
	}
}

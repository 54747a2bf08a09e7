package risk

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"countwall/proxy/state/release"
)

// syntheticHistory is a moderate history of three analysts, seeded: exact
// threshold searches over rows of people (rowSearch, one zip each), noisy
// counts each asked MinRepeats times and more (averaging), noisy one-offs
// and a threshold asked again and again under idp (the variance test).
func syntheticHistory(zips int) []release.Release {
	rng := rand.New(rand.NewPCG(7, 36))
	var rs []release.Release
	id := int64(0)
	add := func(r release.Release) {
		id++
		r.ID = id
		rs = append(rs, r)
	}
	names := []string{"eve", "mallory", "rob"}
	for z := range zips {
		who := names[z%len(names)]
		for _, r := range rowSearch("people", eq("zip", numf(int64(z))), "sex", "age") {
			r.Analyst = who
			add(r)
		}
		cell := count("people", eq("zip", numf(int64(z))), eq("sex", str("F")))
		for range 10 + z%5 {
			add(ask(0, who, "laplace", cell, 1+rng.NormFloat64()*0.3))
		}
		add(ask(0, who, "laplace", count("people", eq("zip", numf(int64(z))), gt("age", numf(int64(rng.IntN(90))))), rng.Float64()*40))
		for range 12 {
			add(ask(0, who, "idp", above(int64(z%4), count("people", eq("zip", numf(int64(z))))), 3+rng.NormFloat64()*1.4e10))
		}
	}
	return rs
}

// TestStreamedHistoryFindsWhatTheWholeDoes: reading each analyst's
// statements alone into a history of its own, assessing it and letting
// it go, finds exactly what Assess finds on every release at once; and
// averaged, which groups only the cells its hash count lets through,
// finds exactly what grouping every noisy answer finds.
func TestStreamedHistoryFindsWhatTheWholeDoes(t *testing.T) {
	rs := syntheticHistory(60)
	o := Options{MinRepeats: 10}
	want := Assess(rs, o)
	var got []Report
	for _, who := range []string{"eve", "mallory", "rob"} {
		h := NewHistory(who)
		for _, r := range rs {
			h.Add(r)
		}
		got = append(got, AssessHistory(h, Options{MinRepeats: 10, Analyst: who})...)
	}
	if len(want) != 3 || !reflect.DeepEqual(got, want) {
		t.Fatalf("streamed per analyst: %d reports, all at once %d, or they differ", len(got), len(want))
	}
	patterns := map[string]int{}
	for _, r := range want {
		for _, f := range r.Findings {
			patterns[f.Pattern]++
		}
	}
	if patterns["averaging"] != 60 || patterns["row reconstruction"] != 96 || patterns["idp variance test"] != 60 {
		t.Errorf("findings by pattern %v, want 60 averaging, 96 rows, 60 variance tests", patterns)
	}
	as := answers(rs)
	if got, want := averaged(as, o.withDefaults()), averagedUnfiltered(as, o.withDefaults()); !reflect.DeepEqual(got, want) {
		t.Errorf("averaged %+v\nwant %+v", got, want)
	}
}

// averagedUnfiltered is averaged grouping every noisy answer by its key.
func averagedUnfiltered(as []answer, o Options) []Finding {
	groups := map[string][]answer{}
	var order []string
	for _, a := range as {
		if a.exact {
			continue
		}
		k := repeatKey(a)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], a)
	}
	var flat []answer
	for _, k := range order {
		if len(groups[k]) >= o.MinRepeats {
			flat = append(flat, groups[k]...)
		}
	}
	return averaged(flat, o)
}

// BenchmarkAssessHistory assesses a history of 300 searched zips (about
// 9,000 statements) read one statement at a time.
func BenchmarkAssessHistory(b *testing.B) {
	rs := syntheticHistory(300)
	b.ReportAllocs()
	for b.Loop() {
		h := NewHistory("")
		for _, r := range rs {
			h.Add(r)
		}
		if reps := AssessHistory(h, Options{}); len(reps) != 3 {
			b.Fatal(fmt.Sprint(len(reps), " reports"))
		}
	}
}

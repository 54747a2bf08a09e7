package audit

import (
	"context"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"countwall/dataset"
	"countwall/proxy/risk"
	"countwall/proxy/state/release"
)

// marginalsRelease is one GROUP BY snp answer of allele = 1 counts: the
// tracing attack's query, as the audit records it.
func marginalsRelease(id int64, analyst string, counts []float64) release.Release {
	r := release.Release{ID: id, Analyst: analyst, Kind: "query", Mechanism: "cellkey", Outcome: "answered",
		Shape: "select snp, count(*) from genomes where allele = $1 group by snp order by snp", Constants: []release.Constant{{Text: "1"}},
		Query: &release.Query{Table: "genomes", GroupBy: []string{"snp"}, Where: []release.Conjunct{release.Compare("allele", release.OpEq, release.Constant{Text: "1"})}}}
	for j, c := range counts {
		r.Cells = append(r.Cells, release.Cell{Group: []release.Datum{{Text: strconv.Itoa(j + 1)}}, Value: c})
	}
	return r
}

// Trace runs the attack's own test on every person of the protected table:
// with the table's true marginals plus a fixed offset of noise, the people it
// traces are exactly those whose genome scores at or above the attack's
// threshold (risk.TracingTest on the same counts, the side file's
// members being people 1..N), and the flag says how many and the
// false-positive rate on the held-out non-members. Deterministic: the
// table is generated from seed 3.
func TestTraceNamesThePeopleTheMarginalsTrace(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "genomes.db")
	const people, snps = 60, 1000
	if err := dataset.GenerateGenomes(ctx, db, dataset.GenomesOptions{People: people, SNPs: snps, Seed: 3}, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	pop, err := dataset.ReadPopulation(dataset.PopulationPath(db))
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]float64, snps)
	for _, g := range pop.Members {
		for j := range g {
			counts[j] += float64(g[j] - '0')
		}
	}
	for j := range counts {
		counts[j] += float64(j%5 - 2) // noise in -2..2, as cellkey's uniform D = 2
	}
	// The population's own marginals say nothing of the table's people.
	blind := make([]float64, snps)
	for j, p := range pop.Marginals {
		blind[j] = math.Round(p * people)
	}
	plain := release.Release{ID: 2, Analyst: "plain", Kind: "query", Mechanism: "cellkey", Outcome: "answered",
		Shape: "select count(*) from genomes", Query: &release.Query{Table: "genomes"}, Cells: []release.Cell{{Value: 40000}}}
	rs := []release.Release{marginalsRelease(1, "tracer", counts), plain, marginalsRelease(3, "blind", blind)}
	reports := risk.Assess(rs, risk.Options{})
	if err := Trace(ctx, db, rs, reports, TraceOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(reports) != 2 || reports[0].Analyst != "blind" || reports[1].Analyst != "tracer" {
		t.Fatalf("reports %+v, want the blind one's flag and the tracer's", reports)
	}
	if b := reports[0]; len(b.Findings) != 1 || !strings.Contains(b.Findings[0].Note, "the release traces no one") {
		t.Errorf("the population's marginals: %+v", b.Findings)
	}
	reports = reports[1:]
	score, T := risk.TracingTest(pop.References, pop.People, 100, 0.05, math.NaN(), counts)
	want := map[string]bool{}
	for i, g := range pop.Members {
		if score(g) >= T {
			want["person = "+strconv.Itoa(i+1)] = true
		}
	}
	got := map[string]bool{}
	var flag *risk.Finding
	for i, f := range reports[0].Findings {
		switch {
		case f.Individual:
			got[f.Cell[0]] = true
			if f.Correct == nil || !*f.Correct || f.Statements != 1 {
				t.Errorf("traced %v: scored %v, %d statements", f.Cell, f.Correct, f.Statements)
			}
		case f.Pattern == "tracing":
			flag = &reports[0].Findings[i]
		}
	}
	if len(want) < people*8/10 || len(got) != len(want) {
		t.Errorf("traced %d people, the attack's test traces %d of %d", len(got), len(want), people)
	}
	for c := range want {
		if !got[c] {
			t.Errorf("%s scores above T but was not traced", c)
		}
	}
	if flag == nil || !strings.HasPrefix(flag.Note, strconv.Itoa(len(want))+" of the table's 60 people traced") || !strings.Contains(flag.Note, "held-out non-members above T") {
		t.Errorf("the flag: %+v", flag)
	}
}

// Without a sample of the population Trace names no one and says why; the
// release stays flagged.
func TestTraceWithoutPopulation(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "genomes.db")
	if err := dataset.GenerateGenomes(ctx, db, dataset.GenomesOptions{People: 10, SNPs: 1000, Seed: 1}, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	rs := []release.Release{marginalsRelease(1, "tracer", make([]float64, 1000))}
	reports := risk.Assess(rs, risk.Options{})
	if err := Trace(ctx, db, rs, reports, TraceOptions{Population: filepath.Join(t.TempDir(), "none.json")}); err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 || len(reports[0].Findings) != 1 || reports[0].Individuals() != 0 ||
		!strings.Contains(reports[0].Findings[0].Note, "not tested") {
		t.Errorf("reports %+v", reports)
	}
}

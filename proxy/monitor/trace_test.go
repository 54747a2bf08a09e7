package monitor

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"countwall/dataset"
	"countwall/proxy/risk"
	"countwall/proxy/state/release"
)

// The monitor decides on the released answers alone: noisy marginals that
// the owner's tracing test (risk.Trace, with the protected rows as
// candidates) would turn into named people are, to the monitor, one flag
// and no individual, so it suspends no one, even with the population file
// named in its options.
func TestMonitorNeverTraces(t *testing.T) {
	db := filepath.Join(t.TempDir(), "genomes.db")
	const people, snps = 60, 1000
	if err := dataset.GenerateGenomes(context.Background(), db, dataset.GenomesOptions{People: people, SNPs: snps, Seed: 3}, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	pop, err := dataset.ReadPopulation(dataset.PopulationPath(db))
	if err != nil {
		t.Fatal(err)
	}
	r := release.Release{ID: 1, Analyst: "tracer", Kind: "query", Mechanism: "cellkey", Outcome: "answered",
		Shape: "select snp, count(*) from genomes where allele = $1 group by snp order by snp", Constants: []release.Constant{{Text: "1"}},
		Query: &release.Query{Table: "genomes", GroupBy: []string{"snp"}, Where: []release.Conjunct{release.Compare("allele", release.OpEq, release.Constant{Text: "1"})}}}
	for j := range snps {
		c := 0.0
		for _, g := range pop.Members {
			c += float64(g[j] - '0')
		}
		r.Cells = append(r.Cells, release.Cell{Group: []release.Datum{{Text: strconv.Itoa(j + 1)}}, Value: c})
	}
	rs := []release.Release{r}
	o := risk.Options{Trace: risk.TraceOptions{Population: dataset.PopulationPath(db)}}
	ds := Decide(rs, o, true)
	if len(ds) != 1 || ds[0].Individuals != 0 || ds[0].Suspend || ds[0].Patterns != "tracing 1" {
		t.Errorf("decisions %+v, want the tracer flagged, no one named, no suspension", ds)
	}
	// What the owner's test would name from the same answers.
	reports := risk.Assess(rs, o)
	if err := risk.Trace(context.Background(), db, rs, reports, o); err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 {
		t.Fatalf("the owner's test reported %d analysts, want the tracer", len(reports))
	}
	if n := reports[0].Individuals(); n < people/2 {
		t.Errorf("the owner's tracing test named %d people; the marginals are exact", n)
	}
}

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

// The monitor decides on the released answers alone: the table's exact
// marginals, which the owner's tracing test (`audit risk --truth`, with
// the protected rows as candidates and a sample of the population) turns
// into named people, are to the monitor one flag and no individual, so it
// suspends no one. The solvers it runs open no database and read no file:
// they cannot trace.
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
	ds := Decide([]release.Release{r}, risk.Options{}, true)
	if len(ds) != 1 || ds[0].Individuals != 0 || ds[0].Suspend || ds[0].Patterns != "tracing 1" {
		t.Errorf("decisions %+v, want the tracer flagged, no one named, no suspension", ds)
	}
}

package dataset

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
)

// The genomes table, for the tracing attack (Dwork, Smith, Steinke and
// Ullman's survey, section 3.2; REFERENCES.md [DSSU17]): N people, each
// with D binary attributes (SNPs), stored in long form (person, snp,
// allele), one row per person and SNP, with the person as privacy unit.
//
// The population's marginals p_j are drawn uniform on [0.1, 0.9] (a
// "strong" distribution in the survey's sense), and each person's allele j
// is 1 with probability p_j, independently. The side file (Population)
// holds what an attacker of Figure 1 knows and the table does not: the
// marginals, reference samples from the same population that are not in
// the table, the genomes of some members (the targets whose data the
// attacker has) and of held-out non-members.
const (
	GenomesTableName     = "genomes"
	DefaultGenomesPeople = 200
	DefaultGenomesSNPs   = 800
)

// GenomesOptions choose the genomes table to generate.
type GenomesOptions struct {
	People, SNPs int    // N and D, at least 1
	Seed         uint64 // the same seed, N and D give the same table and side file
	// References, Members and NonMembers are how many reference samples,
	// member targets and held-out non-members the side file holds
	// (defaults 200, min(N, 100) and 100).
	References, Members, NonMembers int
}

// Population is the side file written beside a genomes table.
type Population struct {
	People    int       `json:"people"`
	SNPs      int       `json:"snps"`
	Seed      uint64    `json:"seed"`
	Marginals []float64 `json:"marginals"` // p_j
	// Genomes are written as strings of 0s and 1s, allele j at position j-1.
	References []string `json:"references"`  // drawn from the population, not in the table
	Members    []string `json:"members"`     // the genomes of people 1..len(Members) of the table
	NonMembers []string `json:"non_members"` // drawn from the population, not in the table
}

func genomeString(g []uint8) string {
	b := make([]byte, len(g))
	for i, a := range g {
		b[i] = '0' + a
	}
	return string(b)
}

// PopulationPath is the side file's path for a genomes database at path.
func PopulationPath(dbPath string) string { return dbPath + ".population.json" }

// ReadPopulation reads a side file.
func ReadPopulation(path string) (*Population, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the population file: %w", err)
	}
	var p Population
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("reading the population file %s: %w", path, err)
	}
	if len(p.Marginals) != p.SNPs {
		return nil, fmt.Errorf("population file %s: %d marginals for %d SNPs", path, len(p.Marginals), p.SNPs)
	}
	return &p, nil
}

// GenomesTable describes the genomes table with its public domains.
func GenomesTable(snps int) Table {
	return Table{
		Name:        GenomesTableName,
		PrivacyUnit: "person",
		Columns: []Column{
			{Name: "person", Type: TypeInteger, Doc: "person number 1..N: the privacy unit"},
			{Name: "snp", Type: TypeInteger, HasRange: true, Min: 1, Max: int64(snps), Doc: "attribute number 1..D"},
			{Name: "allele", Type: TypeInteger, HasRange: true, Min: 0, Max: 1, Doc: "the person's binary attribute"},
		},
	}
}

const genomesStream = 0x67656e6f6d65 // "genome"

// GenerateGenomes writes a new SQLite file at path with the genomes table
// and its side file at PopulationPath(path).
func GenerateGenomes(ctx context.Context, path string, o GenomesOptions, w WriteOptions) error {
	if o.People < 1 || o.SNPs < 1 {
		return fmt.Errorf("genomes: people and snps must be at least 1, got %d and %d", o.People, o.SNPs)
	}
	if int64(o.People)*int64(o.SNPs) > 200_000_000 {
		return fmt.Errorf("genomes: %d people x %d SNPs is over 200 million rows", o.People, o.SNPs)
	}
	if o.References == 0 {
		o.References = 200
	}
	if o.Members == 0 {
		o.Members = min(o.People, 100)
	}
	if o.NonMembers == 0 {
		o.NonMembers = 100
	}
	o.Members = min(o.Members, o.People)
	r := newRNG(o.Seed, genomesStream)
	pop := &Population{People: o.People, SNPs: o.SNPs, Seed: o.Seed, Marginals: make([]float64, o.SNPs)}
	for j := range pop.Marginals {
		pop.Marginals[j] = 0.1 + 0.8*r.float64()
	}
	draw := func() []uint8 {
		g := make([]uint8, o.SNPs)
		for j, p := range pop.Marginals {
			if r.float64() < p {
				g[j] = 1
			}
		}
		return g
	}
	// Members first, so the table is fixed by the seed whatever the side
	// file's sizes; the side file's samples come from the same stream after.
	members := make([][]uint8, o.People)
	for i := range members {
		members[i] = draw()
	}
	for _, g := range members[:o.Members] {
		pop.Members = append(pop.Members, genomeString(g))
	}
	for range o.References {
		pop.References = append(pop.References, genomeString(draw()))
	}
	for range o.NonMembers {
		pop.NonMembers = append(pop.NonMembers, genomeString(draw()))
	}
	t := GenomesTable(o.SNPs)
	defs := []string{"person INTEGER NOT NULL", "snp INTEGER NOT NULL", "allele INTEGER NOT NULL", "PRIMARY KEY (person, snp)"}
	var i int64
	total := int64(o.People) * int64(o.SNPs)
	err := buildNewFile(ctx, path, w.Force, generatedFileMode, func(ctx context.Context, db *sql.DB) error {
		return createAndFill(ctx, db, t, defs, total, w.Progress, func(row []any) error {
			p, s := i/int64(o.SNPs), i%int64(o.SNPs)
			row[0], row[1], row[2] = p+1, s+1, int64(members[p][s])
			i++
			return nil
		})
	})
	if err != nil {
		return err
	}
	b, err := json.Marshal(pop)
	if err != nil {
		return err
	}
	return os.WriteFile(PopulationPath(path), b, 0o644)
}

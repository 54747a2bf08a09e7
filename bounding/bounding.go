// Package bounding measures what bounding each person's contribution costs
// in accuracy: on a long table (one row per person per attribute), the error
// of laplace's per-cell answers as max_groups_per_unit G grows, against the
// true unbounded counts. Small G drops most of a person's cells (bias); large
// G scales the noise up (G/epsilon). The table in the README comes from here
// (countwall bench bounds).
package bounding

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"countwall/ir"
	"countwall/mechanisms"
	"countwall/planner/plan"
	"countwall/proxy"

	"github.com/spf13/pflag"
)

// Options describe one experiment.
type Options struct {
	People, Attributes int     // the long table: People x Attributes rows
	Epsilon            float64 // per query
	Runs               int     // noisy answers per G
	Gs                 []int64 // max_groups_per_unit values to try
	Seed               uint64
}

// Row is the outcome for one G.
type Row struct {
	G int64
	// NoiseScale is the Laplace scale G*C/epsilon (C = 1).
	NoiseScale float64
	// Bias is the mean over cells of |true count - bounded count|: what the
	// bound itself drops.
	Bias float64
	// MeanAbsError is the mean over cells and runs of |answer - true count|.
	MeanAbsError float64
	// RelativeError is MeanAbsError over the mean true count.
	RelativeError float64
}

// WriteLongTable writes a table genomes(person, snp, allele) of people x
// attributes rows into a new SQLite file at path: allele 1 with a
// probability drawn per snp from [0.1, 0.9], seeded.
func WriteLongTable(ctx context.Context, path string, people, attributes int, seed uint64) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return fmt.Errorf("creating the long table: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE genomes (person INTEGER, snp INTEGER, allele INTEGER)`); err != nil {
		return fmt.Errorf("creating the long table: %w", err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	freq := make([]float64, attributes)
	for i := range freq {
		freq[i] = 0.1 + 0.8*r.Float64()
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	ins, err := tx.PrepareContext(ctx, `INSERT INTO genomes VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	for p := 1; p <= people; p++ {
		for s := range attributes {
			allele := 0
			if r.Float64() < freq[s] {
				allele = 1
			}
			if _, err := ins.ExecContext(ctx, p, s, allele); err != nil {
				return fmt.Errorf("writing the long table: %w", err)
			}
		}
	}
	return tx.Commit()
}

// ErrorVsG writes a long table into dir and answers the one-way marginal
// `SELECT snp, COUNT(*) FROM genomes WHERE allele = 1 GROUP BY snp` (what a
// tracing attack reads) under laplace with C = 1 and each G, Runs times.
func ErrorVsG(ctx context.Context, dir string, o Options) ([]Row, error) {
	if o.People < 1 || o.Attributes < 1 || o.Runs < 1 || !(o.Epsilon > 0) {
		return nil, fmt.Errorf("bounding: people, attributes and runs must be >= 1 and epsilon > 0")
	}
	path := filepath.Join(dir, fmt.Sprintf("long-%dx%d.db", o.People, o.Attributes))
	if err := WriteLongTable(ctx, path, o.People, o.Attributes, o.Seed); err != nil {
		return nil, err
	}
	store, err := proxy.OpenStore(path, plan.StoreOptions{})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	table := &ir.Table{Name: "genomes", PrivacyUnit: "person", Policy: ir.DefaultPolicy(),
		Columns: map[string]*ir.Column{
			"person": {Name: "person", Type: ir.TypeInt},
			"snp":    {Name: "snp", Type: ir.TypeInt, Domain: &ir.Domain{IsRange: true, Min: 0, Max: int64(o.Attributes - 1)}},
			"allele": {Name: "allele", Type: ir.TypeInt},
		}}
	table.Policy.MaxGroups = max(table.Policy.MaxGroups, o.Attributes)
	q := &ir.Query{Table: "genomes", GroupBy: []string{"snp"},
		Where: &ir.Compare{Column: "allele", Op: "=", Value: ir.Literal{Kind: ir.LitInt, Int: 1}}}
	secret := []byte(fmt.Sprintf("countwall bench bounds %d", o.Seed))
	truth, err := store.Run(ctx, table, q, ir.Needs{}, secret)
	if err != nil {
		return nil, err
	}
	var meanTrue float64
	for _, c := range truth.Cells {
		meanTrue += float64(c.Count)
	}
	meanTrue /= float64(len(truth.Cells))

	var rows []Row
	for _, g := range o.Gs {
		m, err := mechanisms.New("laplace", mechanisms.Params{"max_groups_per_unit": g}, mechanisms.Env{Seed: int64(o.Seed) + g})
		if err != nil {
			return nil, err
		}
		res, err := store.Run(ctx, table, q, m.Needs(), secret)
		if err != nil {
			return nil, err
		}
		row := Row{G: res.Bounds.MaxGroupsPerUnit, NoiseScale: float64(res.Bounds.MaxGroupsPerUnit*res.Bounds.MaxRowsPerUnit) / o.Epsilon}
		for i, c := range res.Cells {
			row.Bias += math.Abs(float64(truth.Cells[i].Count - c.Count))
		}
		row.Bias /= float64(len(res.Cells))
		req := &mechanisms.Request{Query: q, Result: res, Epsilon: o.Epsilon}
		for range o.Runs {
			answers, _, err := m.Answer(ctx, req)
			if err != nil {
				return nil, err
			}
			for i, a := range answers {
				row.MeanAbsError += math.Abs(float64(a.Int - truth.Cells[i].Count))
			}
		}
		row.MeanAbsError /= float64(o.Runs * len(res.Cells))
		row.RelativeError = row.MeanAbsError / meanTrue
		rows = append(rows, row)
	}
	return rows, nil
}

// AddFlags defines on f the flags of `bench bounds` (all but the work
// directory).
func (o *Options) AddFlags(f *pflag.FlagSet) {
	f.IntVar(&o.People, "people", 1000, "people in the long table")
	f.IntVar(&o.Attributes, "snps", 50, "attributes (snps) per person")
	f.Float64Var(&o.Epsilon, "epsilon", 1, "epsilon per query")
	f.IntVar(&o.Runs, "runs", 20, "noisy answers per G")
	f.Int64SliceVar(&o.Gs, "g", []int64{1, 2, 5, 10, 20, 25, 50}, "max_groups_per_unit values")
}

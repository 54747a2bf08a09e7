// Package bounding measures what bounding each person's contribution costs
// in accuracy: on a long table (one row per person per attribute), the error
// of laplace's per-cell answers as max_groups_per_unit G grows, against the
// true unbounded counts. Small G drops most of a person's cells (bias); large
// G scales the noise up (G/epsilon). The table in docs/mechanisms.md comes from here
// (countwall bench bounds).
//
// Like every attack tool it reaches the firewall through its front door: one
// in-process Engine per G, under a config that declares the bound, asked in
// SQL. It reads the table it wrote only for the truth it scores against.
package bounding

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/spf13/pflag"
)

// Options describe one experiment.
type Options struct {
	People, Attributes int     // the long table: People x Attributes rows
	Epsilon            float64 // per query
	Runs               int     // noisy answers per G
	Gs                 []int64 // max_groups_per_unit values to try
	Seed               uint64  // the long table's values

	// noiseSeed makes the firewalls' noise reproducible: for this
	// package's tests only, as proxy.Options.NoiseSeed is.
	noiseSeed int64
}

// Row is the outcome for one G.
type Row struct {
	// G is the bound in force: the firewall lowers it to the number of
	// cells when that is smaller.
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

// marginal is the one-way marginal a tracing attack reads.
const marginal = "SELECT snp, COUNT(*) FROM genomes WHERE allele = 1 GROUP BY snp"

// ErrorVsG writes a long table into dir and answers the one-way marginal
// `SELECT snp, COUNT(*) FROM genomes WHERE allele = 1 GROUP BY snp` under
// laplace with C = 1 and each G, Runs times.
func ErrorVsG(ctx context.Context, dir string, o Options) ([]Row, error) {
	if o.People < 1 || o.Attributes < 1 || o.Runs < 1 || !(o.Epsilon > 0) {
		return nil, fmt.Errorf("bounding: people, attributes and runs must be >= 1 and epsilon > 0")
	}
	path := filepath.Join(dir, fmt.Sprintf("long-%dx%d.db", o.People, o.Attributes))
	if err := WriteLongTable(ctx, path, o.People, o.Attributes, o.Seed); err != nil {
		return nil, err
	}
	tr, err := readTruth(ctx, path, o.Attributes)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, g := range o.Gs {
		row, err := measure(ctx, deployment{dir: dir, dbPath: path, o: o}, g, tr)
		if err != nil {
			return nil, fmt.Errorf("bounding, G = %d: %w", g, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// measure asks the marginal Runs times of a firewall bounding G cells per
// person and scores the answers against the truth.
func measure(ctx context.Context, dep deployment, g int64, tr truth) (_ Row, err error) {
	fw, err := dep.open(ctx, g)
	if err != nil {
		return Row{}, err
	}
	defer func() { err = errors.Join(err, fw.close()) }()
	q := fw.connect()
	inForce, c, err := boundsInForce(ctx, q)
	if err != nil {
		return Row{}, err
	}
	row := Row{G: inForce, NoiseScale: float64(inForce*c) / dep.o.Epsilon, Bias: tr.bias(inForce)}
	for range dep.o.Runs {
		answers, err := q.Query(ctx, marginal)
		if err != nil {
			return Row{}, err
		}
		if len(answers.Values) != len(tr.counts) {
			return Row{}, fmt.Errorf("the marginal has %d rows, want one per snp (%d)", len(answers.Values), len(tr.counts))
		}
		for i := range answers.Values {
			snp, err := answers.Int(i, 0)
			if err != nil {
				return Row{}, err
			}
			n, err := answers.Int(i, 1)
			if err != nil {
				return Row{}, err
			}
			if snp < 0 || snp >= int64(len(tr.counts)) {
				return Row{}, fmt.Errorf("the marginal has a row for snp %d, outside 0..%d", snp, len(tr.counts)-1)
			}
			row.MeanAbsError += math.Abs(float64(n - tr.counts[snp]))
		}
	}
	row.MeanAbsError /= float64(dep.o.Runs * len(tr.counts))
	row.RelativeError = row.MeanAbsError / tr.meanCount()
	return row, nil
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

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"countwall/attacks"
	"countwall/attacks/experiments"
)

// addHistogramFlags adds the flags of the histogram attacks (noise-remover).
// None may be named like a config key (see config.Load), which it would set.
func addHistogramFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("column", "age", "noise-remover: the column whose histogram to recover (a plain name folds to lower case, \"Name\" keeps its case)")
	f.Int64("min", 0, "noise-remover: the column's public integer domain, lowest value")
	f.Int64("max", 100, "noise-remover: the column's public integer domain, highest value")
	f.StringSlice("values", nil, "noise-remover: the column's public domain as a list of values, instead of --min/--max")
	f.Int("k", 50, "noise-remover: two-partitions averaged per value (the paper's Table 2 uses 200)")
	f.Int("base-k", 200, "noise-remover: two-partitions for the base set's total (the paper uses 1000)")
	f.Int("base-size", 10, "noise-remover: values in the base set")
	f.Uint64("partition-seed", 1, "noise-remover: chooses which two-partitions are sampled")
}

// histogramOptions lays the histogram flags a user set over the attack's
// demo defaults (the age histogram of the whole people table).
func histogramOptions(cmd *cobra.Command, a *attacks.Attack, o *attacks.Options) error {
	if a != attacks.NoiseRemover {
		return nil
	}
	f := cmd.Flags()
	if f.Changed("column") {
		raw, _ := f.GetString("column")
		col, err := attacks.ParseColumnName(raw)
		if err != nil {
			return fmt.Errorf("--column: %w", err)
		}
		o.Column = col
	}
	switch {
	case f.Changed("values"):
		vals, _ := f.GetStringSlice("values")
		o.Values = nil
		for _, v := range vals {
			o.Values = append(o.Values, attacks.Literal(strings.TrimSpace(v)))
		}
	case f.Changed("min") || f.Changed("max") || f.Changed("column"):
		lo, _ := f.GetInt64("min")
		hi, _ := f.GetInt64("max")
		if hi < lo || hi-lo > 100_000 {
			return fmt.Errorf("--min %d and --max %d do not make a domain of at most 100,000 values", lo, hi)
		}
		o.Values = attacks.IntRange(lo, hi)
	}
	for name, field := range map[string]*int{"k": &o.K, "base-k": &o.BaseK, "base-size": &o.BaseSize} {
		if f.Changed(name) {
			*field, _ = f.GetInt(name)
		}
	}
	if f.Changed("partition-seed") {
		o.Seed, _ = f.GetUint64("partition-seed")
	}
	return nil
}

// printHistogram shows what a histogram attack recovered, and its score.
func printHistogram(w io.Writer, r *attacks.Result) {
	if len(r.Histogram) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%-10s %10s %10s %10s\n", "value", "answer", "recovered", "truth")
	for _, b := range r.Histogram {
		truth, mark := "", ""
		if b.Truth != nil {
			truth = fmt.Sprint(*b.Truth)
			if *b.Truth != b.Estimate {
				mark = "  wrong"
			}
		}
		fmt.Fprintf(w, "%-10s %10d %10d %10s%s\n", b.Value, b.Answer, b.Estimate, truth, mark)
	}
	if r.CellsExact != nil {
		fmt.Fprintf(w, "\n%d of %d values recovered exactly (%.1f%%)\n", *r.CellsExact, r.CellsTotal, 100*float64(*r.CellsExact)/float64(r.CellsTotal))
	}
}

// terminalProgress draws "label: done/total" on w when it is a terminal
// outside CI, and is nil (no progress) otherwise.
func terminalProgress(w io.Writer, label string) func(done, total int) {
	f, ok := w.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) || runningInCI() {
		return nil
	}
	var last time.Time
	return func(done, total int) {
		now := time.Now()
		if done < total && now.Sub(last) < 200*time.Millisecond {
			return
		}
		last = now
		fmt.Fprintf(f, "\r%s: %d/%d", label, done, total)
		if done == total {
			fmt.Fprint(f, "\r\033[K")
		}
	}
}

func newTable3Cmd() *cobra.Command {
	var o experiments.Table3Options
	cmd := &cobra.Command{
		Use:   "noise-remover-table3",
		Short: "Reproduce Asghar-Kaafar Table 3: the noise remover on the Adult age column under cellkey D = 2, 3, 5",
		Long: `noise-remover-table3 loads the Adult CSV into a temporary SQLite file, fronts its age column
(ages 10..120, 111 values) with cellkey (uniform noise on -D..D, counts <= 4 published as 0)
and runs the noise remover for each D and k, --runs times each with a new firewall secret. The
queries are answered by the simulated firewall of attacks/columnsim, which gives the Engine's
answers exactly for these one-column queries at a few microseconds each: one run of the table
asks about 1.3 million queries. It prints the mean values recovered exactly beside the paper's.`,
		Example: "  countwall attack noise-remover-table3 --adult ../shared/data/adult.csv --runs 20",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			o.Progress = terminalProgress(os.Stderr, "table 3")
			res, err := experiments.Table3(ctx, o)
			if err != nil {
				return err
			}
			res.Print(cmd.OutOrStdout())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.AdultCSV, "adult", "../shared/data/adult.csv", "the Adult census extract (CSV with id and age columns)")
	f.IntVar(&o.Runs, "runs", 20, "runs per (D, k); the paper averages 100")
	f.IntSliceVar(&o.Ds, "d", []int{2, 3, 5}, "perturbation bounds D")
	f.IntSliceVar(&o.Ks, "k", []int{50, 100, 200, 250}, "two-partitions per value")
	f.IntVar(&o.BaseK, "base-k", 1000, "two-partitions for the base set's total")
	f.Uint64Var(&o.Seed, "seed", 0, "seed for secrets and two-partitions (0: random)")
	return cmd
}

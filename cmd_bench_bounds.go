package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"countwall/proxy/bounding"
)

// benchBoundsCommand is `countwall bench bounds`: the accuracy cost of
// max_groups_per_unit on a long table (proxy/bounding).
func benchBoundsCommand() *cobra.Command {
	o := bounding.Options{Seed: 1}
	var keep string
	cmd := &cobra.Command{
		Use:   "bounds",
		Short: "Measure laplace's error against max_groups_per_unit on a long table",
		Long: `bounds writes a long table genomes(person, snp, allele), one row per person per snp, and
answers the one-way marginal SELECT snp, COUNT(*) FROM genomes WHERE allele = 1 GROUP BY snp under
laplace for each max_groups_per_unit G (max_rows_per_unit 1), --runs times. It prints the noise
scale G/epsilon, the bias (what the bound drops: each person counts in at most G cells) and the
mean absolute error of the answers against the true, unbounded counts.`,
		Example: "  countwall bench bounds --people 1000 --snps 50 --epsilon 1",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			dir, cleanup, err := workDir(keep, "countwall-bench-bounds-")
			if err != nil {
				return err
			}
			defer cleanup()
			rows, err := bounding.ErrorVsG(ctx, dir, o)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "laplace on a %d x %d long table, epsilon %g per query, %d runs\n\n", o.People, o.Attributes, o.Epsilon, o.Runs)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "G\tnoise scale\tbias per cell\tmean abs error\trelative error\t")
			for _, r := range rows {
				fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.1f\t%.1f%%\t\n", r.G, r.NoiseScale, r.Bias, r.MeanAbsError, 100*r.RelativeError)
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.People, "people", 1000, "people in the long table")
	f.IntVar(&o.Attributes, "snps", 50, "attributes (snps) per person")
	f.Float64Var(&o.Epsilon, "epsilon", 1, "epsilon per query")
	f.IntVar(&o.Runs, "runs", 20, "noisy answers per G")
	f.Int64SliceVar(&o.Gs, "g", []int64{1, 2, 5, 10, 20, 25, 50}, "max_groups_per_unit values")
	f.StringVar(&keep, "dir", "", "work in this directory and keep it (default: a temporary one)")
	return cmd
}

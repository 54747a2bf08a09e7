package main

import (
	"os"

	"github.com/spf13/cobra"

	"countwall/attacks/experiments"
)

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
			o.Progress = progressCounter(os.Stderr, "table 3")
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

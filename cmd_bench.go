package main

import (
	"os"

	"github.com/spf13/cobra"

	"countwall/attacks/bench"
)

func init() {
	var keep string
	var o bench.Options
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure protected answers against raw SQLite, the wire against in process, and throughput, as ratios in one run",
		Long: `bench generates a people table and answers the same COUNT queries straight from SQLite,
through the Engine in process under several mechanisms, and over the PostgreSQL wire protocol
(SCRAM on loopback), then runs 1, 2, 4 and 8 concurrent wire clients and the noise remover's
statements. Each line is the median of --rounds rounds of --queries queries; ratios compare lines
of the same run, so they hold across machines better than the times do.`,
		Example: "  countwall bench --rows 100000",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Check(); err != nil {
				return err
			}
			dir, cleanup, err := workDir(keep, "countwall-bench-")
			if err != nil {
				return err
			}
			defer cleanup()
			o.Dir = dir
			o.Progress = progressCounter(os.Stderr, "generating people")
			return bench.Run(cmd.Context(), cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().IntVar(&o.Rows, "rows", 100_000, "rows in the generated people table")
	cmd.Flags().IntVar(&o.PerRound, "queries", 200, "queries per round")
	cmd.Flags().IntVar(&o.Rounds, "rounds", 3, "rounds per line; the median is reported")
	cmd.Flags().StringVar(&keep, "dir", "", "keep the generated database here (reused when present)")
	cmd.AddCommand(benchBoundsCommand())
	rootCmd.AddCommand(cmd)
}

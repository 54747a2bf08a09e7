package cli

import (
	"os"

	"github.com/spf13/cobra"

	"countwall/attacks/bench"
	"countwall/attacks/bounding"
	"countwall/dataset/progress"
	"countwall/internal/workdir"
)

// newBenchCmd is `countwall bench` with its bounds and postgres runs.
func newBenchCmd() *cobra.Command {
	var keep string
	var o bench.Options
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure protected answers against raw SQLite, the wire against in process, and throughput, as ratios in one run",
		Long: `bench generates a people table and answers the same COUNT queries straight from SQLite,
through the Engine in process under several mechanisms, and over the PostgreSQL wire protocol
(SCRAM on loopback), then 1, 2, 4 and 8 concurrent wire clients and the noise remover's statements,
and bounded counts on a long table of --rows/10 people with 1 to 20 rows each. Each firewall reads
its table into memory before its first statement, as serve does (the start lines). Each other line
is the median of --rounds rounds of --queries queries; ratios compare lines of one run.`,
		Example: "  countwall bench --rows 100000",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Check(); err != nil {
				return err
			}
			return workdir.In(keep, "countwall-bench-", func(dir string) error {
				o.Dir, o.Progress = dir, progress.Counter(os.Stderr, "generating people")
				return bench.Run(cmd.Context(), cmd.OutOrStdout(), o)
			})
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&keep, "dir", "", "keep the generated database here (reused when present)")
	cmd.AddCommand(benchBoundsCommand(), benchPostgresCommand())
	return cmd
}

// benchBoundsCommand is `countwall bench bounds`: the accuracy cost of
// max_groups_per_unit on a long table (bounding).
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
			return workdir.In(keep, "countwall-bench-bounds-", func(dir string) error {
				rows, err := bounding.ErrorVsG(cmd.Context(), dir, o)
				if err != nil {
					return err
				}
				return bounding.WriteTable(cmd.OutOrStdout(), o, rows)
			})
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&keep, "dir", "", "work in this directory and keep it (default: a temporary one)")
	return cmd
}

// benchPostgresCommand is `countwall bench postgres` (attacks/bench).
func benchPostgresCommand() *cobra.Command {
	var o bench.PostgresOptions
	var keep string
	cmd := &cobra.Command{
		Use:   "postgres --store URL --state URL",
		Short: "Measure the PostgreSQL store against raw PostgreSQL, and 1, 2, 4 instances on one PostgreSQL state",
		Long: `postgres fronts the people table of --store (copied there from a generated SQLite table
when it has none: the role needs CREATE the first time), answers the bench statements straight
from PostgreSQL and through the Engine under exact, cellkey and laplace, then runs 8 wire clients
over 1, 2 and 4 firewall instances in this process sharing --state, under laplace.`,
		Example: "  countwall bench postgres --store postgres://bench@localhost/census --state postgres://bench@localhost/countwall_state",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return workdir.In(keep, "countwall-bench-postgres-", func(dir string) error {
				o.Dir, o.Progress = dir, progress.Counter(os.Stderr, "generating people")
				return bench.RunPostgres(cmd.Context(), cmd.OutOrStdout(), o)
			})
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&keep, "dir", "", "keep the generated files here")
	return cmd
}

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"countwall/dataset"
)

func init() {
	rootCmd.AddCommand(newGenCmd())
}

func newGenCmd() *cobra.Command {
	gen := &cobra.Command{
		Use:   "gen",
		Short: "Generate a deterministic synthetic dataset into a new SQLite file",
		Long: "Generate a deterministic synthetic dataset into a new SQLite file. The same seed and\n" +
			"row count always give the same rows. The file is written whole or not at all, and an\n" +
			"existing file is left alone unless --force is given.",
	}

	var people dataset.PeopleOptions
	var peopleOut string
	var peopleForce bool
	peopleCmd := &cobra.Command{
		Use:   "people",
		Short: "A census-like people table: age, sex, suburb, zip, income, education, marital, occupation, hours, secret",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGen(cmd, dataset.PeopleTableName, peopleOut, people.Rows, func(ctx context.Context, w dataset.WriteOptions) error {
				w.Force = peopleForce
				return dataset.GeneratePeople(ctx, peopleOut, people, w)
			})
		},
	}
	peopleCmd.Flags().Int64Var(&people.Rows, "rows", dataset.DefaultPeopleRows, "number of people")
	peopleCmd.Flags().Uint64Var(&people.Seed, "seed", 1, "random seed: the same seed and rows give the same table")
	peopleCmd.Flags().StringVar(&peopleOut, "out", "people.db", "SQLite file to create")
	peopleCmd.Flags().BoolVar(&peopleForce, "force", false, "replace the file if it exists")

	var synth dataset.SyntheticOptions
	var synthOut string
	var synthForce bool
	synthCmd := &cobra.Command{
		Use:   "synthetic",
		Short: "The Asghar-Kaafar synthetic column: N(25,5) rounded to 1..51, public domain 1..107",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGen(cmd, dataset.SyntheticTableName, synthOut, synth.Rows, func(ctx context.Context, w dataset.WriteOptions) error {
				w.Force = synthForce
				return dataset.GenerateSynthetic(ctx, synthOut, synth, w)
			})
		},
	}
	synthCmd.Flags().Int64Var(&synth.Rows, "rows", dataset.DefaultSyntheticRows, "number of rows")
	synthCmd.Flags().Uint64Var(&synth.Seed, "seed", 1, "random seed: the same seed and rows give the same table")
	synthCmd.Flags().BoolVar(&synth.PaperCounts, "paper-counts", false,
		"write exactly the counts of the paper's Table 4 (600,000 rows, shuffled by the seed)")
	synthCmd.Flags().StringVar(&synthOut, "out", "synthetic.db", "SQLite file to create")
	synthCmd.Flags().BoolVar(&synthForce, "force", false, "replace the file if it exists")

	var genomes dataset.GenomesOptions
	var genomesOut string
	var genomesForce bool
	genomesCmd := &cobra.Command{
		Use:   "genomes",
		Short: "N people x D binary attributes in long form (person, snp, allele), with the population in a side file, for the tracing attack",
		Long: `genomes writes N people with D binary attributes each, as rows (person, snp, allele) with
person the privacy unit. The population's marginals p_j are uniform on [0.1, 0.9]; the side file
FILE.population.json holds them, reference samples and held-out non-members drawn from the same
population (not in the table), and the genomes of some members: what the tracing attacker knows.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGen(cmd, dataset.GenomesTableName, genomesOut, int64(genomes.People)*int64(genomes.SNPs), func(ctx context.Context, w dataset.WriteOptions) error {
				w.Force = genomesForce
				if err := dataset.GenerateGenomes(ctx, genomesOut, genomes, w); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "population (marginals, %d reference samples, targets) in %s\n%s",
					genomes.References, dataset.PopulationPath(genomesOut), dataset.GenomesTable(genomes.SNPs).ConfigSnippet())
				return nil
			})
		},
	}
	genomesCmd.Flags().IntVar(&genomes.People, "people", dataset.DefaultGenomesPeople, "number of people N in the table")
	genomesCmd.Flags().IntVar(&genomes.SNPs, "snps", dataset.DefaultGenomesSNPs, "number of binary attributes D")
	genomesCmd.Flags().Uint64Var(&genomes.Seed, "seed", 1, "random seed: the same seed, people and snps give the same table")
	genomesCmd.Flags().IntVar(&genomes.References, "references", 200, "reference samples in the side file")
	genomesCmd.Flags().IntVar(&genomes.NonMembers, "non-members", 100, "held-out non-members in the side file")
	genomesCmd.Flags().StringVar(&genomesOut, "out", "genomes.db", "SQLite file to create")
	genomesCmd.Flags().BoolVar(&genomesForce, "force", false, "replace the file if it exists")

	gen.AddCommand(peopleCmd, synthCmd, genomesCmd)
	return gen
}

// runGen runs one generator with progress (Ctrl-C cancels the context), and says
// what it wrote.
func runGen(cmd *cobra.Command, table, out string, rows int64, generate func(context.Context, dataset.WriteOptions) error) error {
	progress, done := progressBar(cmd.ErrOrStderr(), "generating "+table)
	start := time.Now()
	err := generate(cmd.Context(), dataset.WriteOptions{Progress: progress})
	done()
	if errors.Is(err, dataset.ErrExists) {
		return fmt.Errorf("%w; use --force to replace it", err)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("gen %s: interrupted; nothing was written", table)
	}
	if err != nil {
		return fmt.Errorf("gen %s: %w", table, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s rows of table %s to %s in %s\n",
		humanize.Comma(rows), table, out, time.Since(start).Round(time.Millisecond))
	return nil
}

package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"countwall/config/starter"
	"countwall/dataset"
)

// newGenCmd is `countwall gen`: one subcommand per synthetic table.
func newGenCmd() *cobra.Command {
	gen := &cobra.Command{
		Use:   "gen",
		Short: "Generate a deterministic synthetic dataset into a new SQLite file",
		Long: "Generate a deterministic synthetic dataset into a new SQLite file. The same seed and\n" +
			"row count always give the same rows. The file is written whole or not at all, and an\n" +
			"existing file is left alone unless --force is given.",
	}

	var people dataset.PeopleOptions
	peopleCmd := genCmd("people", "A census-like people table: age, sex, suburb, zip, income, education, marital, occupation, hours, secret",
		dataset.PeopleTableName, func() int64 { return people.Rows },
		func(cmd *cobra.Command, out string, w dataset.WriteOptions) error {
			return dataset.GeneratePeople(cmd.Context(), out, people, w)
		})
	people.AddFlags(peopleCmd.Flags())

	var synth dataset.SyntheticOptions
	synthCmd := genCmd("synthetic", "The Asghar-Kaafar synthetic column: N(25,5) rounded to 1..51, public domain 1..107",
		dataset.SyntheticTableName, func() int64 { return synth.Rows },
		func(cmd *cobra.Command, out string, w dataset.WriteOptions) error {
			return dataset.GenerateSynthetic(cmd.Context(), out, synth, w)
		})
	synth.AddFlags(synthCmd.Flags())

	var genomes dataset.GenomesOptions
	genomesCmd := genCmd("genomes", "N people x D binary attributes in long form (person, snp, allele), with the population in a side file, for the tracing attack",
		dataset.GenomesTableName, func() int64 { return int64(genomes.People) * int64(genomes.SNPs) },
		func(cmd *cobra.Command, out string, w dataset.WriteOptions) error {
			if err := dataset.GenerateGenomes(cmd.Context(), out, genomes, w); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "population (marginals, %d reference samples, targets) in %s\n%s",
				genomes.References, dataset.PopulationPath(out), dataset.GenomesTable(genomes.SNPs).ConfigSnippet())
			return nil
		})
	genomesCmd.Long = `genomes writes N people with D binary attributes each, as rows (person, snp, allele) with
person the privacy unit. The population's marginals p_j are uniform on [0.1, 0.9]; the side file
FILE.population.json holds them, reference samples and held-out non-members drawn from the same
population (not in the table), and the genomes of some members: what the tracing attacker knows.`
	genomes.AddFlags(genomesCmd.Flags())

	gen.AddCommand(peopleCmd, synthCmd, genomesCmd, genBankCmd())
	return gen
}

// genBankCmd is `gen bank`, which also writes the table's config.
func genBankCmd() *cobra.Command {
	var bank dataset.BankOptions
	var bankConfig starter.Flags
	bankCmd := genCmd("bank", "A bank's marketing calls in the shape of the UCI Bank Marketing data: 17 attributes of mixed widths",
		dataset.BankTableName, func() int64 { return bank.Rows },
		func(cmd *cobra.Command, out string, w dataset.WriteOptions) error {
			if err := dataset.GenerateBank(cmd.Context(), out, bank, w); err != nil {
				return err
			}
			if bankConfig.Out != "" {
				return writeStarter(cmd.Context(), cmd.OutOrStdout(), bankConfig, out, dataset.BankTable())
			}
			fmt.Fprint(cmd.OutOrStdout(), dataset.BankTable().ConfigSnippet())
			return nil
		})
	bankCmd.Long = `bank writes one row per client of a bank's direct-marketing campaign, in the shape of the
public UCI Bank Marketing data (bank-full.csv: 45,211 rows) that Protivash et al. reconstruct
under IDP: id (the privacy unit), age, job, marital, education, default, balance, housing, loan,
contact, day, month, duration, campaign, pdays, previous, poutcome and y. Two columns are wide
(balance and duration: thousands of values), the rest narrow categories or short ranges. The
marginals and the dependencies between columns are drawn to be close to the public data's; no
row is anyone's. It prints the table's config section, or with --config-out writes a whole
runnable config as 'countwall init' does; either way with every column's domain, fixed by the
generator rather than read from the data. "default" is a reserved word: queries double-quote it.`
	bank.AddFlags(bankCmd.Flags())
	bankConfig.Add(bankCmd.Flags(), "config-out", "also write a whole runnable config for the table to this file")
	return bankCmd
}

// genCmd is one gen subcommand writing table to --out (default NAME.db,
// replaced only with --force) with progress, saying what it wrote.
func genCmd(name, short, table string, rows func() int64, generate func(cmd *cobra.Command, out string, w dataset.WriteOptions) error) *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return dataset.GenerateShown(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), table, out, force, rows,
				func(_ context.Context, path string, w dataset.WriteOptions) error { return generate(cmd, path, w) })
		},
	}
	cmd.Flags().StringVar(&out, "out", name+".db", "SQLite file to create")
	cmd.Flags().BoolVar(&force, "force", false, "replace the file if it exists")
	return cmd
}

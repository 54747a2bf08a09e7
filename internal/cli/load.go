package cli

import (
	"github.com/spf13/cobra"

	"countwall/config/starter"
	"countwall/dataset"
)

// newLoadCmd is `countwall load`: a CSV file imported into SQLite.
func newLoadCmd() *cobra.Command {
	var c dataset.LoadCommand
	var s starter.Flags
	cmd := &cobra.Command{
		Use:   "load --csv FILE --db FILE --table NAME (--unit COLUMN | --add-id NAME) [--replace]",
		Short: "Import a CSV file into a SQLite table, with inferred types and a privacy-unit column",
		Long: "Import a CSV file into a table of a new or existing SQLite database, so that countwall\n" +
			"can front your own data. The header row names the columns; each column is INTEGER, REAL\n" +
			"or TEXT as its values allow, and empty fields are NULL. --unit names the column that\n" +
			"identifies the contributor (the privacy unit): it must exist and never be empty. A file\n" +
			"without one, where each row is one person, gets a row-number column with --add-id NAME\n" +
			"(or --unit rownum). The delimiter (',', ';', tab or '|') is detected from the header line\n" +
			"unless --delimiter gives it; fields may be quoted.\n" +
			"A malformed file is reported with its line number and nothing is written. On success\n" +
			"the command prints the tables: entry to add to the countwall config; --config-out FILE\n" +
			"writes a whole runnable config instead (as 'countwall init' does), with one analyst whose\n" +
			"generated password is printed once and domains read from the data marked for review.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.WritesConfig = s.Out != ""
			res, err := c.Run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil || s.Out == "" {
				return err
			}
			return writeStarter(cmd.Context(), cmd.OutOrStdout(), s, c.DBPath, res.Table)
		},
	}
	c.AddFlags(cmd.Flags())
	s.Add(cmd.Flags(), "config-out", "also write a whole runnable config for the table to this file")
	cmd.MarkFlagsOneRequired("unit", "add-id")
	for _, name := range []string{"csv", "db", "table"} {
		_ = cmd.MarkFlagRequired(name) // cannot fail: the flags are defined just above
	}
	return cmd
}

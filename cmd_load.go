package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"countwall/dataset"
	"countwall/dataset/progress"
)

func init() {
	rootCmd.AddCommand(newLoadCmd())
}

func newLoadCmd() *cobra.Command {
	var o dataset.LoadOptions
	var delimiter string
	var s starterFlags
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
			update, done := progress.Bar(cmd.ErrOrStderr(), "loading "+o.Table)
			o.Progress = update
			if delimiter != "" {
				d, err := dataset.ParseDelimiter(delimiter)
				if err != nil {
					return err
				}
				o.Delimiter = d
			}
			start := time.Now()
			res, err := dataset.LoadCSV(cmd.Context(), o)
			done()
			if errors.Is(err, dataset.ErrTableExists) {
				return fmt.Errorf("load: %w; use --replace to replace it, or choose another --table", err)
			}
			if errors.Is(err, context.Canceled) {
				return errors.New("load: interrupted; nothing was written")
			}
			if err != nil {
				return fmt.Errorf("load: %w", err)
			}
			if s.out == "" {
				res.Report(cmd.OutOrStdout(), cmd.ErrOrStderr(), o.DBPath, time.Since(start))
				return nil
			}
			res.Summary(cmd.OutOrStdout(), cmd.ErrOrStderr(), o.DBPath, time.Since(start))
			return writeStarter(cmd.Context(), cmd.OutOrStdout(), s, o.DBPath, res.Table)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.CSVPath, "csv", "", "CSV file to import (first row: column names)")
	f.StringVar(&o.DBPath, "db", "", "SQLite file to create or add the table to")
	f.StringVar(&o.Table, "table", "", "name of the table to create")
	f.StringVar(&o.Unit, "unit", "", "privacy-unit column: identifies the contributor of each row")
	f.StringVar(&o.AddID, "add-id", "", "add a column of this name numbering the rows, as the privacy unit (each row one person)")
	f.StringVar(&delimiter, "delimiter", "", `field separator: ",", ";", "tab" or "|" (default: detected)`)
	f.BoolVar(&o.Replace, "replace", false, "replace the table if the database already has it")
	s.add(f, "config-out", "also write a whole runnable config for the table to this file")
	cmd.MarkFlagsOneRequired("unit", "add-id")
	for _, name := range []string{"csv", "db", "table"} {
		_ = cmd.MarkFlagRequired(name) // cannot fail: the flags are defined just above
	}
	return cmd
}

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"countwall/dataset"
)

func init() {
	rootCmd.AddCommand(newLoadCmd())
}

func newLoadCmd() *cobra.Command {
	var o dataset.LoadOptions
	var delimiter string
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
			"the command prints the tables: entry to add to the countwall config.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			progress, done := progressBar(cmd.ErrOrStderr(), "loading "+o.Table)
			o.Progress = progress
			if delimiter != "" {
				d, err := parseDelimiter(delimiter)
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
			what := "existing database"
			if res.CreatedFile {
				what = "new database"
			}
			for _, w := range res.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+w)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "loaded %s rows into table %s of %s %s in %s\n\n",
				humanize.Comma(res.Rows), res.Table.Name, what, o.DBPath, time.Since(start).Round(time.Millisecond))
			warn := cmd.ErrOrStderr()
			if len(res.Lowered) > 0 {
				fmt.Fprintf(warn, "note: stored in lower case, as SQL reads unquoted names: %s\n", strings.Join(res.Lowered, ", "))
			}
			if reserved := res.Table.ReservedColumns(); len(reserved) > 0 {
				fmt.Fprintf(warn, "warning: reserved words in SQL, to be written in double quotes in queries (WHERE \"%s\" = ...): %s\n",
					reserved[0], strings.Join(reserved, ", "))
			}
			fmt.Fprintf(out, "# Config entry for %s (add it under the countwall config):\n", res.Table.Name)
			fmt.Fprint(out, res.Table.ConfigSnippet())
			return nil
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
	cmd.MarkFlagsOneRequired("unit", "add-id")
	for _, name := range []string{"csv", "db", "table"} {
		_ = cmd.MarkFlagRequired(name) // cannot fail: the flags are defined just above
	}
	return cmd
}

// parseDelimiter reads --delimiter: one character, or "tab".
func parseDelimiter(s string) (rune, error) {
	if s == "tab" || s == `\t` {
		return '\t', nil
	}
	r := []rune(s)
	if len(r) != 1 || r[0] == '"' || r[0] == '\n' || r[0] == '\r' {
		return 0, fmt.Errorf(`--delimiter must be one character such as ";" or "tab", not %q`, s)
	}
	return r[0], nil
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"countwall/config"
	"countwall/config/starter"
	"countwall/dataset"
	"countwall/proxy/pgwire"
)

// newInitCmd is `countwall init`: a runnable config for an existing table.
func newInitCmd() *cobra.Command {
	var s starter.Flags
	var dbPath, table, unit string
	cmd := &cobra.Command{
		Use:   "init --db FILE --table NAME --unit COLUMN --out FILE",
		Short: "Write a whole runnable config for a table of an existing SQLite database",
		Long: `init writes a config that 'countwall serve' runs as it is: the database and state paths, one
analyst with a generated password (printed once; the file keeps only its SCRAM verifier), the
budget, every mechanism's parameters, the table with its columns and privacy unit, and domains
read from the data: integer ranges up to 10,000 values wide, and the values of text columns with at
most 50 of them. A
domain read from the data is not public knowledge (it says which values occur), so each one is
marked in the file for review before analysts connect. The database is opened read-only.
'countwall load --config-out FILE' does the same for a CSV file it imports.`,
		Example: `  countwall init --db bank.db --table bank --unit id --out bank.yaml && countwall serve --config bank.yaml`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.Contains(dbPath, "://") {
				return errors.New("init: --db must be a SQLite file; a PostgreSQL store's config is written by hand (docs/operator.md, \"When one machine is not enough\")")
			}
			t, err := starter.ReadTable(cmd.Context(), dbPath, table, unit)
			if err != nil {
				return fmt.Errorf("init: %w", err)
			}
			return writeStarter(cmd.Context(), cmd.OutOrStdout(), s, dbPath, t)
		},
	}
	f := cmd.Flags()
	f.StringVar(&dbPath, "db", "", "the SQLite database to protect (read only)")
	f.StringVar(&table, "table", "", "the table analysts will count")
	f.StringVar(&unit, "unit", "", "its privacy-unit column: identifies the contributor of each row")
	s.Add(f, "out", "the config file to write")
	for _, name := range []string{"db", "table", "unit", "out"} {
		_ = cmd.MarkFlagRequired(name) // cannot fail: the flags are defined just above
	}
	return cmd
}

// writeStarter writes the config s asks for, fronting table t of the
// database at dbPath, with the wire's verifier and the config loader.
func writeStarter(ctx context.Context, w io.Writer, s starter.Flags, dbPath string, t dataset.Table) error {
	return s.Write(ctx, w, dbPath, t, func(password string) (string, error) { return pgwire.NewVerifier(password, 4096) },
		func(path string) error { _, err := config.Load(path, nil); return err })
}

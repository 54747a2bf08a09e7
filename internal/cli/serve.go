package cli

import (
	"github.com/spf13/cobra"

	"countwall/proxy/server"
)

// newServeCmd is `countwall serve`: the PostgreSQL wire front door.
func newServeCmd() *cobra.Command {
	var c server.Command
	cmd := &cobra.Command{
		Use:   "serve --config FILE",
		Short: "Serve analysts over the PostgreSQL wire protocol",
		Long: `Serve answers analysts' COUNT queries over the PostgreSQL wire protocol, so that
psql, pgx, psycopg2 and other PostgreSQL clients connect as they would to PostgreSQL.

Editing the config file (or sending SIGHUP) reloads it: the mechanism, policy and analysts change
for the next statement. Caps may be lowered, never raised (countwall budget grant raises a
budget). Sessions continue, except those of analysts the new config removes, which are ended
(57P01). An invalid config is refused with a logged reason and the old one stays in force. SIGINT or SIGTERM stops accepting, lets
statements in flight finish, and exits.`,
		Example: `  countwall serve --config examples/countwall.yaml
  PGPASSWORD=alice-secret psql "host=127.0.0.1 port=5433 user=alice dbname=countwall" -c "SHOW budget"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			stopProfile, err := startCPUProfile(cmd)
			if err != nil {
				return err
			}
			defer stopProfile()
			return c.Run(cmd.Context(), cmd.Flags(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&c.ConfigPath, "config", "", "config file (YAML)")
	cmd.Flags().String("server.listen", "", "listen address (overrides server.listen)")
	cmd.Flags().StringVar(&c.LogLevel, "log-level", "info", "least level logged: debug, info (one line per statement), warn or error")
	cmd.Flags().String("cpuprofile", "", "write a CPU profile of the server to this file until it stops")
	addConfigFlags(cmd)
	return cmd
}

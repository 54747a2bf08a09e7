package cli

import (
	"github.com/spf13/cobra"

	"countwall/config"
	"countwall/proxy"
)

// newQueryCmd is `countwall query`: one statement answered in process.
func newQueryCmd() *cobra.Command {
	var configPath, analyst string
	cmd := &cobra.Command{
		Use:   "query --config FILE [--analyst NAME] SQL",
		Short: "Answer one statement in process, through the configured mechanism",
		Example: `  countwall query --config examples/countwall.yaml "SELECT sex, COUNT(*) FROM people GROUP BY sex"
  countwall query --config examples/countwall.yaml --mechanism.name exact "SELECT COUNT(*) FROM people WHERE age > 60"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := config.Load(configPath, cmd.Flags())
			if err != nil {
				return err
			}
			name, err := cfg.Analyst(analyst)
			if err != nil {
				return err
			}
			return proxy.QueryOnce(cmd.Context(), cmd.OutOrStdout(), cfg, name, args[0])
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (YAML)")
	cmd.Flags().StringVar(&analyst, "analyst", "", "analyst the config names, the query is charged to (default: the config's only analyst)")
	addConfigFlags(cmd)
	return cmd
}

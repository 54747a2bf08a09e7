package main

import (
	"github.com/spf13/cobra"

	"countwall/config"
	"countwall/pgerror"
	"countwall/proxy"
)

func init() {
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
			ctx := cmd.Context()
			engine, err := proxy.Open(ctx, cfg, proxy.Options{})
			if err != nil {
				return err
			}
			defer engine.Close()
			res, err := engine.Query(ctx, analyst, args[0])
			if err != nil {
				return pgerror.AsPSQL(err)
			}
			res.WriteTable(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (YAML)")
	cmd.Flags().StringVar(&analyst, "analyst", "local", "analyst the query is charged to")
	addConfigFlags(cmd)
	rootCmd.AddCommand(cmd)
}

package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"countwall/config"
	"countwall/proxy/statedb"
)

// newAuditListCmd is `countwall audit list`: the audit log, filtered.
func newAuditListCmd() *cobra.Command {
	var statePath, configPath, analyst, since string
	var last int
	cmd := &cobra.Command{
		Use:   "list [--analyst A] [--since T]",
		Short: "Print the audit log: time, analyst, outcome, fingerprint, mechanism, charge",
		Long: `List prints every statement the firewall received, oldest first: when, which analyst,
whether it was answered or refused (with the SQLSTATE), the statement's keyed fingerprint (the
SQL text is never stored), the mechanism in force and what the answer was charged.`,
		Example: `  countwall audit list --config examples/countwall.yaml --analyst alice --since 1h
  countwall audit list --state countwall-state.db --since 2026-11-23T09:00:00Z`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from, err := statedb.ParseSince(since, time.Now())
			if err != nil {
				return err
			}
			if statePath == "" && configPath != "" {
				cfg, err := config.Load(configPath, nil)
				if err != nil {
					return err
				}
				statePath = cfg.State
			}
			if statePath == "" {
				return errors.New("--state or --config is required: which state database to read")
			}
			if err := statedb.Exists(statePath); err != nil {
				return err
			}
			ctx := commandContext(cmd)
			st, err := statedb.Open(ctx, statePath)
			if err != nil {
				return err
			}
			defer st.Close()
			entries, err := st.ListAudit(ctx, statedb.AuditFilter{Analyst: analyst, Since: from, Last: last})
			if err != nil {
				return err
			}
			return statedb.WriteAuditTable(cmd.OutOrStdout(), entries)
		},
	}
	f := cmd.Flags()
	f.StringVar(&statePath, "state", "", "state database (or give --config)")
	f.StringVar(&configPath, "config", "", "config file whose state database to read")
	f.StringVar(&analyst, "analyst", "", "only this analyst's statements")
	f.StringVar(&since, "since", "", "only statements from this time on: RFC 3339 (2026-11-23T09:00:00Z) or a duration back from now (1h)")
	f.IntVar(&last, "last", 0, "only the most recent N statements (0: all)")
	return cmd
}

package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"countwall/config"
	"countwall/proxy/admin"
	"countwall/proxy/state"
)

// newAuditListCmd is `countwall audit list`: the audit log, filtered.
func newAuditListCmd() *cobra.Command {
	var statePath, configPath, analyst, since string
	var last int
	cmd := &cobra.Command{
		Use:   "list [--analyst A] [--since T]",
		Short: "Print the audit log: time, analyst, outcome, fingerprint, mechanism, charge, statement, released cells",
		Long: `List prints every statement the firewall received, oldest first: when, which analyst,
whether it was answered or refused (with the SQLSTATE), the statement's keyed fingerprint, the
mechanism in force and what the answer was charged; for an answered query also the statement (as
normalised: names folded, spacing and comments dropped) and the cells sent. A refused statement's
text is not kept, only its fingerprint and the refusal.`,
		Example: `  countwall audit list --config examples/countwall.yaml --analyst alice --since 1h
  countwall audit list --state countwall-state.db --since 2026-11-23T09:00:00Z`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, _, from, err := openAudit(cmd, statePath, configPath, since)
			if err != nil {
				return err
			}
			defer st.Close()
			entries, err := st.ListAudit(cmd.Context(), state.AuditFilter{Analyst: analyst, Since: from, Last: last})
			if err != nil {
				return err
			}
			return state.WriteAuditTable(cmd.OutOrStdout(), entries)
		},
	}
	f := cmd.Flags()
	auditSelectionFlags(f, &statePath, &configPath, &analyst, &since)
	f.IntVar(&last, "last", 0, "only the most recent N statements (0: all)")
	return cmd
}

// auditSelectionFlags are the flags by which the audit commands find the
// state database and select statements.
func auditSelectionFlags(f *pflag.FlagSet, statePath, configPath, analyst, since *string) {
	f.StringVar(statePath, "state", "", "state database (or give --config)")
	f.StringVar(configPath, "config", "", "config file whose state database to read")
	f.StringVar(analyst, "analyst", "", "only this analyst's statements")
	f.StringVar(since, "since", "", "only statements from this time on: RFC 3339 (2026-11-23T09:00:00Z) or a duration back from now (1h)")
}

// openAudit opens the state database the flags name and reads --since.
func openAudit(cmd *cobra.Command, statePath, configPath, since string) (*state.DB, *config.Config, time.Time, error) {
	from, err := state.ParseSince(since, time.Now())
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	st, cfg, err := admin.OpenState(cmd.Context(), statePath, configPath)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	return st, cfg, from, nil
}

// newAuditExportCmd is `countwall audit export`: the audit log as JSON lines.
func newAuditExportCmd() *cobra.Command {
	var statePath, configPath, analyst, since, out string
	cmd := &cobra.Command{
		Use:   "export [--analyst A] [--since T] [--out FILE]",
		Short: "Write the audit log as JSON lines: every statement with its outcome, and each answer's statement and released cells",
		Long: `Export writes one JSON object per statement, oldest first, to standard output or --out: id,
time, analyst, kind, mechanism, outcome, SQLSTATE and reason of a refusal, fingerprint, charge, and
for an answered query its shape (the statement with $1, $2, ... for its constants), the constants
and the cells sent. It reads the audit tables only; the budget ledger is not touched. The file is
what 'countwall audit risk --from' reads.`,
		Example: `  countwall audit export --config examples/countwall.yaml --analyst alice --out alice.jsonl
  countwall audit export --state countwall-state.db --since 24h | gzip > audit-today.jsonl.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, _, from, err := openAudit(cmd, statePath, configPath, since)
			if err != nil {
				return err
			}
			defer st.Close()
			var w io.Writer = cmd.OutOrStdout()
			if out != "" {
				f, err := os.Create(out)
				if err != nil {
					return fmt.Errorf("creating export file: %w", err)
				}
				defer f.Close()
				w = f
			}
			n, err := st.ExportAudit(cmd.Context(), w, state.AuditFilter{Analyst: analyst, Since: from})
			if err != nil {
				return err
			}
			if out != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d statements written to %s\n", n, out)
			}
			return nil
		},
	}
	f := cmd.Flags()
	auditSelectionFlags(f, &statePath, &configPath, &analyst, &since)
	f.StringVar(&out, "out", "", "write to this file instead of standard output")
	return cmd
}

// newAuditPruneCmd is `countwall audit prune`: retention by hand.
func newAuditPruneCmd() *cobra.Command {
	var statePath, configPath string
	var olderThan time.Duration
	cmd := &cobra.Command{
		Use:   "prune --older-than DURATION",
		Short: "Delete audit rows older than a duration (serve does it by itself with audit.retain); the ledger is not touched",
		Long: `Prune deletes the audit rows written before now minus --older-than (or the config's audit.retain
when --older-than is not given). The budget ledger keeps its own record of every charge and is not
touched. Export first what you want to keep: a pruned row is gone, and 'audit risk' can no longer
see it.`,
		Example: `  countwall audit prune --config examples/countwall.yaml --older-than 2160h`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, cfg, err := admin.OpenState(cmd.Context(), statePath, configPath)
			if err != nil {
				return err
			}
			defer st.Close()
			if olderThan == 0 && cfg != nil {
				olderThan = cfg.Audit.Retain
			}
			if olderThan <= 0 {
				return fmt.Errorf("--older-than must be a positive duration such as 2160h (or set audit.retain in the config)")
			}
			n, err := st.PruneAudit(cmd.Context(), time.Now().Add(-olderThan))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d audit rows older than %s deleted\n", n, olderThan)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&statePath, "state", "", "state database (or give --config)")
	f.StringVar(&configPath, "config", "", "config file whose state database to use")
	f.DurationVar(&olderThan, "older-than", 0, "delete rows older than this (e.g. 2160h for 90 days)")
	return cmd
}

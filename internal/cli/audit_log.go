package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"countwall/proxy/admin"
)

// newAuditListCmd is `countwall audit list`: the audit log, filtered.
func newAuditListCmd() *cobra.Command {
	var sel admin.AuditSelection
	var last int
	cmd := &cobra.Command{
		Use:   "list [--analyst A] [--since T]",
		Short: "Print the audit log: time, analyst, outcome, fingerprint, mechanism, charge, statement, released cells",
		Long: `List prints every statement the firewall received, oldest first: when, which analyst,
whether it was answered or refused (with the SQLSTATE), the statement's keyed fingerprint, the
mechanism in force and what the answer was charged; for an answered query also the statement (as
normalised: names folded, spacing and comments dropped) and the cells sent, and "-" for its
fingerprint, which stands in only for a text not kept. A refused statement's text is not kept,
only its fingerprint and the refusal.`,
		Example: `  countwall audit list --config examples/countwall.yaml --analyst alice --since 1h
  countwall audit list --state countwall-state.db --since 2026-11-23T09:00:00Z`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return admin.ListAudit(cmd.Context(), cmd.OutOrStdout(), sel, last)
		},
	}
	f := cmd.Flags()
	sel.AddFlags(f)
	f.IntVar(&last, "last", 0, "only the most recent N statements (0: all)")
	return cmd
}

// newAuditExportCmd is `countwall audit export`: the audit log as JSON lines.
func newAuditExportCmd() *cobra.Command {
	var sel admin.AuditSelection
	var out string
	cmd := &cobra.Command{
		Use:   "export [--analyst A] [--since T] [--out FILE]",
		Short: "Write the audit log as JSON lines: every statement with its outcome, and each answer's statement and released cells",
		Long: `Export writes one JSON object per statement, oldest first, to standard output or --out: id,
time, analyst, kind, mechanism, outcome, SQLSTATE and reason of a refusal, fingerprint (empty for
an answered query, which carries its statement instead), charge, and
for an answered query its shape (the statement with $1, $2, ... for its constants), the constants
and the cells sent. It reads the audit tables only; the budget ledger is not touched. The file is
what 'countwall audit risk --from' reads.`,
		Example: `  countwall audit export --config examples/countwall.yaml --analyst alice --out alice.jsonl
  countwall audit export --state countwall-state.db --since 24h | gzip > audit-today.jsonl.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := admin.ExportAudit(cmd.Context(), cmd.OutOrStdout(), sel, out)
			if err == nil && out != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d statements written to %s\n", n, out)
			}
			return err
		},
	}
	f := cmd.Flags()
	sel.AddFlags(f)
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
			n, age, err := admin.PruneAudit(cmd.Context(), statePath, configPath, olderThan)
			if err == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "%d audit rows older than %s deleted\n", n, age)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&statePath, "state", "", "state database (or give --config)")
	f.StringVar(&configPath, "config", "", "config file whose state database to use")
	f.DurationVar(&olderThan, "older-than", 0, "delete rows older than this (e.g. 2160h for 90 days)")
	return cmd
}

package main

import "github.com/spf13/cobra"

// The `audit` command; its subcommands read the audit log.
func init() {
	audit := &cobra.Command{
		Use:   "audit",
		Short: "Read the audit log of the state database",
	}
	audit.AddCommand(newAuditListCmd())
	rootCmd.AddCommand(audit)
}

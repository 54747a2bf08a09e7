package main

import "github.com/spf13/cobra"

// newAuditRiskCmd is `countwall audit risk`.
func newAuditRiskCmd() *cobra.Command {
	return &cobra.Command{Use: "risk", Hidden: true}
}

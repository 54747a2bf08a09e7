package cli

import (
	"os"

	"github.com/spf13/cobra"

	"countwall/attacks/audit"
	"countwall/dataset/progress"
)

// newAuditCmd is `countwall audit`: the deployed audit, and the audit
// log's list, export, prune and risk.
func newAuditCmd() *cobra.Command {
	var c audit.Command
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Measure, per mechanism, the privacy loss per person an attacker can demonstrate; 'audit list' reads the audit log",
		Long: `audit deploys each mechanism on two neighbouring databases (a table without and with one
person), runs distinguishing tests many times with fresh noise (and, for sticky mechanisms, a new
firewall secret every trial), and reports a lower bound on epsilon per person from the tests'
error rates with Clopper-Pearson bounds, beside what the mechanism claims.`,
		Example: `  countwall audit
  countwall audit --mechanism laplace --mechanism idp --trials 2000 --json audit.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.Run(cmd.Context(), cmd.OutOrStdout(), func(m string) func(done, total int) {
				return progress.Counter(os.Stderr, "auditing "+m)
			})
		},
	}
	cmd.AddCommand(newAuditListCmd(), newAuditExportCmd(), newAuditPruneCmd(), newAuditRiskCmd())
	c.AddFlags(cmd.Flags())
	return cmd
}

// Package cli is countwall's command line: the cobra commands, each built
// afresh by New, that read flags and hand the work to the packages that do
// it. The commands only wire; nothing here measures, answers or decides.
package cli

import "github.com/spf13/cobra"

// New builds the countwall command with every subcommand. Each call returns
// a tree of its own, with its own flag values, so that a test may run
// several commands in one process.
func New() *cobra.Command {
	root := &cobra.Command{
		Use:           "countwall",
		Short:         "An SQL COUNT query firewall in front of SQLite, with the attacks that test it",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newAttacksCmd(), newAuditCmd(), newBenchCmd(), newBudgetCmd(), newDemoCmd(), newGenCmd(),
		newInitCmd(), newLoadCmd(), newPasswdCmd(), newQueryCmd(), newServeCmd())
	return root
}

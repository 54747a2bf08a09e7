package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"countwall/proxy/admin"
)

// budgetState is where the budget subcommands find the state database:
// --state, or the state of the config given with --config.
type budgetState struct{ statePath, configPath string }

// with runs use on the budgets, closed after.
func (s *budgetState) with(cmd *cobra.Command, use func(*admin.Budgets) error) error {
	return admin.UseBudgets(cmd.Context(), s.statePath, s.configPath, use)
}

// newBudgetCmd is `countwall budget`: list, grant and reset.
func newBudgetCmd() *cobra.Command {
	s := &budgetState{}
	budget := &cobra.Command{
		Use:   "budget",
		Short: "List, grant and reset analysts' privacy budgets in the state database",
		Long: `The budget ledger keeps each analyst's spending per accounting kind (dp, idp,
bdp) in the state database. Caps come from the config and are held: a config change may
lower them, never raise them. Grants add to them.`,
	}
	budget.PersistentFlags().StringVar(&s.statePath, "state", "", "state database (or give --config)")
	budget.PersistentFlags().StringVar(&s.configPath, "config", "", "config file whose state database to use")
	budget.AddCommand(newBudgetListCmd(s), newBudgetGrantCmd(s), newBudgetResetCmd(s))
	return budget
}

func newBudgetListCmd(s *budgetState) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Show every analyst's spending, cap (with grants) and what remains",
		Long: `list shows, per analyst and accounting kind, what has been spent, the cap (the config's
cap plus grants) and what remains. The caps come from the config: give --config to see them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return s.with(cmd, func(b *admin.Budgets) error { return b.Print(cmd.Context(), cmd.OutOrStdout()) })
		},
	}
}

func newBudgetGrantCmd(s *budgetState) *cobra.Command {
	var kind string
	var eps, delta float64
	grant := &cobra.Command{
		Use:     "grant ANALYST --kind dp|idp|bdp --epsilon E [--delta D]",
		Short:   "Give an analyst extra budget on top of her cap: the only way to raise a budget",
		Example: "  countwall budget grant --state countwall-state.db bob --kind dp --epsilon 0.5",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return s.with(cmd, func(b *admin.Budgets) error {
				if err := b.Grant(cmd.Context(), args[0], kind, eps, delta); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "granted analyst %q %s epsilon %g, delta %g\n", args[0], kind, eps, delta)
				return nil
			})
		},
	}
	grant.Flags().StringVar(&kind, "kind", "dp", "accounting kind: dp, idp or bdp")
	grant.Flags().Float64Var(&eps, "epsilon", 0, "extra epsilon")
	grant.Flags().Float64Var(&delta, "delta", 0, "extra delta")
	return grant
}

func newBudgetResetCmd(s *budgetState) *cobra.Command {
	var yes bool
	reset := &cobra.Command{
		Use:   "reset ANALYST [--yes]",
		Short: "Clear an analyst's spending and grants (the history is kept)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			analyst := args[0]
			if !yes {
				question := fmt.Sprintf("Reset all privacy budget spending and grants of analyst %q?", analyst)
				if err := admin.Confirm(cmd.InOrStdin(), cmd.OutOrStdout(), question, "reset", "--yes"); err != nil {
					return err
				}
			}
			return s.with(cmd, func(b *admin.Budgets) error {
				if err := b.Reset(cmd.Context(), analyst); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "reset analyst %q\n", analyst)
				return nil
			})
		},
	}
	reset.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	return reset
}

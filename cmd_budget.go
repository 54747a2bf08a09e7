package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"countwall/config"
	"countwall/mechanisms"
	"countwall/mechanisms/ledger"
	"countwall/proxy/statedb"
)

// stdinIsTerminal reports whether a person can answer a confirmation
// prompt; tests replace it.
var stdinIsTerminal = func() bool {
	return isatty.IsTerminal(os.Stdin.Fd()) || isatty.IsCygwinTerminal(os.Stdin.Fd())
}

func init() {
	var statePath, configPath string
	var cfg *config.Config // loaded when --config is given: it holds the caps
	budget := &cobra.Command{
		Use:   "budget",
		Short: "List, grant and reset analysts' privacy budgets in the state database",
		Long: `The budget ledger keeps each analyst's spending per accounting kind (dp, idp,
bdp) in the state database. Caps come from the config and are held: a config change may
lower them, never raise them. Grants add to them.`,
	}
	budget.PersistentFlags().StringVar(&statePath, "state", "", "state database (or give --config)")
	budget.PersistentFlags().StringVar(&configPath, "config", "", "config file whose state database to use")

	openLedger := func(ctx context.Context) (*ledger.Ledger, func(), error) {
		if configPath != "" {
			var err error
			if cfg, err = config.Load(configPath, nil); err != nil {
				return nil, nil, err
			}
			if statePath == "" {
				statePath = cfg.State
			}
		}
		if statePath == "" {
			return nil, nil, errors.New("--state or --config is required: which state database to use")
		}
		if err := statedb.Exists(statePath); err != nil {
			return nil, nil, err
		}
		st, err := statedb.Open(ctx, statePath)
		if err != nil {
			return nil, nil, err
		}
		l, err := ledger.Open(ctx, st.SQL(), ledger.Options{})
		if err != nil {
			st.Close()
			return nil, nil, err
		}
		return l, func() { l.Close(context.Background()); st.Close() }, nil
	}

	list := &cobra.Command{
		Use:   "list",
		Short: "Show every analyst's spending, cap (with grants) and what remains",
		Long: `list shows, per analyst and accounting kind, what has been spent, the cap (the config's
cap plus grants) and what remains. The caps come from the config: give --config to see them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := commandContext(cmd)
			l, done, err := openLedger(ctx)
			if err != nil {
				return err
			}
			defer done()
			var capsFor func(string) ledger.Caps
			if cfg != nil {
				capsFor = configCaps(cfg)
			}
			balances, err := l.List(ctx, capsFor)
			if err != nil {
				return err
			}
			printBalances(cmd.OutOrStdout(), balances)
			if cfg == nil && len(balances) > 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "(caps and what remains come from the config: give --config to see them)")
			}
			return nil
		},
	}

	var kind string
	var eps, delta float64
	grant := &cobra.Command{
		Use:     "grant ANALYST --kind dp|idp|bdp --epsilon E [--delta D]",
		Short:   "Give an analyst extra budget on top of her cap: the only way to raise a budget",
		Example: "  countwall budget grant --state countwall-state.db bob --kind dp --epsilon 0.5",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := commandContext(cmd)
			l, done, err := openLedger(ctx)
			if err != nil {
				return err
			}
			defer done()
			if err := l.Grant(ctx, args[0], mechanisms.Accounting(strings.ToLower(kind)), eps, delta); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "granted analyst %q %s epsilon %g, delta %g\n", args[0], kind, eps, delta)
			return nil
		},
	}
	grant.Flags().StringVar(&kind, "kind", "dp", "accounting kind: dp, idp or bdp")
	grant.Flags().Float64Var(&eps, "epsilon", 0, "extra epsilon")
	grant.Flags().Float64Var(&delta, "delta", 0, "extra delta")

	var yes bool
	reset := &cobra.Command{
		Use:   "reset ANALYST [--yes]",
		Short: "Clear an analyst's spending and grants (the history is kept)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			analyst := args[0]
			if !yes {
				if !stdinIsTerminal() {
					return errors.New("reset needs confirmation: run it on a terminal, or pass --yes")
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Reset all privacy budget spending and grants of analyst %q? [y/N] ", analyst)
				answer, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
					return errors.New("reset cancelled")
				}
			}
			ctx := commandContext(cmd)
			l, done, err := openLedger(ctx)
			if err != nil {
				return err
			}
			defer done()
			if err := l.Reset(ctx, analyst); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "reset analyst %q\n", analyst)
			return nil
		},
	}
	reset.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")

	budget.AddCommand(list, grant, reset)
	rootCmd.AddCommand(budget)
}

func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// configCaps gives each analyst's caps as the firewall applies them: the
// analyst's own in the config, else the budget section's.
func configCaps(cfg *config.Config) func(string) ledger.Caps {
	return func(analyst string) ledger.Caps {
		if a, ok := cfg.Analysts[analyst]; ok {
			return ledger.Caps{Epsilon: a.EpsilonCap, Delta: a.DeltaCap}
		}
		return ledger.Caps{Epsilon: cfg.Budget.EpsilonCap, Delta: cfg.Budget.DeltaCap}
	}
}

// printBalances writes one line per analyst and kind: spent, cap (grants
// included), remaining and granted, for epsilon and delta. A cap that is not
// known (no config given) shows as "-".
func printBalances(w io.Writer, balances []ledger.Balance) {
	if len(balances) == 0 {
		fmt.Fprintln(w, "no budget spent or granted yet")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ANALYST\tKIND\tEPSILON SPENT\tEPSILON CAP\tEPSILON REMAINING\tEPSILON GRANTED\tDELTA SPENT\tDELTA CAP\tDELTA REMAINING\tDELTA GRANTED\tRHO SPENT")
	for _, b := range balances {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.Analyst, b.Kind,
			budgetFigure(b.EpsilonSpent), budgetFigure(b.EpsilonCap), budgetFigure(b.EpsilonRemaining()), budgetFigure(b.EpsilonGranted),
			budgetFigure(b.DeltaSpent), budgetFigure(b.DeltaCap), budgetFigure(b.DeltaRemaining()), budgetFigure(b.DeltaGranted), budgetFigure(b.RhoSpent))
	}
	tw.Flush()
	for _, b := range balances {
		if b.RhoSpent > 0 && b.RhoDelta == 0 {
			fmt.Fprintln(w, "RHO SPENT is zCDP spending (gaussian), not included in EPSILON SPENT: at the analyst's delta cap d it costs epsilon rho + 2*sqrt(rho*ln(1/d)) (SHOW budget shows it converted)")
			break
		}
	}
}

func budgetFigure(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

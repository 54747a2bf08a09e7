package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"countwall/attacks"
	"countwall/attacks/runner"
)

func init() {
	cmd := &cobra.Command{
		Use:   "attack NAME",
		Short: "Run an attack program against the firewall and report what it recovered",
		Long: `attack sends an attack's SQL through the firewall's front door, over the wire to a running
firewall (--dsn) or in process through a config (--config), and reports what it recovered, how
many queries it sent and what the firewall charged. Given the protected database (--truth), it
scores itself. 'countwall attack list' describes the attacks; 'countwall attack NAME --help'
shows an attack's own flags, whose defaults work on the demo's people table.`,
		Example: `  countwall attack differencing --config examples/countwall.yaml --mechanism.name suppress \
      --where "suburb = 'suburb_0015' AND age > 60" --truth examples/demo.db
  countwall attack averaging --dsn "postgres://alice:alice-secret@127.0.0.1:5433/countwall" \
      --where "sex = 'F' AND age BETWEEN 40 AND 44" --sql-log averaging.sql
  countwall attack differencing --emit --where "suburb = 'suburb_0015' AND age > 60" | psql ...`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return fmt.Errorf("unknown attack %q; 'countwall attack list' shows them", args[0])
		},
	}
	for _, a := range attacks.All() {
		cmd.AddCommand(newAttackCmd(a))
	}
	cmd.AddCommand(newListCmd(), newTable3Cmd(), newReportCmd())
	rootCmd.AddCommand(cmd)
}

// newAttackCmd is `countwall attack NAME`: the flags every attack shares,
// then the attack's own (Attack.Flags), all starting from its demo defaults.
func newAttackCmd(a *attacks.Attack) *cobra.Command {
	var ro runner.Options
	var emit bool
	var o attacks.Options
	if a.Demo != nil {
		o = a.Demo()
	}
	if o.Target.Table == "" {
		o.Target.Table = "people"
	}
	cmd := &cobra.Command{
		Use:   a.Name,
		Short: fmt.Sprintf("against %s: %s (%s)", a.Against, a.Summary, a.Source),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if emit {
				if a.Script == nil {
					return fmt.Errorf("%s is adaptive: its next query depends on the answers, so it has no script to emit", a.Name)
				}
				for _, s := range a.Script(o) {
					fmt.Fprintln(out, s+";")
				}
				return nil
			}
			o.Progress = progressCounter(os.Stderr, a.Name)
			stopProfile, err := startCPUProfile(cmd)
			if err != nil {
				return err
			}
			defer stopProfile()
			ro.Flags = cmd.Flags()
			return runner.Run(cmd.Context(), out, a, o, ro)
		},
	}
	f := cmd.Flags()
	f.StringVar(&ro.DSN, "dsn", "", "PostgreSQL URL of a running firewall")
	f.StringVar(&ro.Config, "config", "", "run in process through this config instead of --dsn")
	f.StringVar(&ro.Analyst, "analyst", "attacker", "analyst name for in-process runs")
	f.StringVar(&o.Target.Table, "table", o.Target.Table, "target table")
	f.StringVar(&o.Target.Where, "where", o.Target.Where, "target predicate")
	f.StringVar(&ro.SQLLog, "sql-log", "", "write every statement sent to this file")
	f.StringVar(&ro.Truth, "truth", "", "protected database, to score the result")
	f.StringVar(&ro.JSON, "json", "", "write the result as JSON to this file")
	if a.Script != nil {
		f.BoolVar(&emit, "emit", false, "print the attack's SQL script instead of running it")
	}
	f.IntVar(&o.MaxQueries, "max-queries", o.MaxQueries, "stop the attack after this many queries (0: no limit)")
	f.String("cpuprofile", "", "write a CPU profile of the attack to this file")
	if a.Flags != nil {
		a.Flags(f, &o)
	}
	addConfigFlags(cmd)
	return cmd
}

// newListCmd describes the attacks.
func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Describe the attacks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			for _, a := range attacks.All() {
				fmt.Fprintf(tw, "%s\tagainst %s\t%s (%s)\n", a.Name, a.Against, a.Summary, a.Source)
			}
			return tw.Flush()
		},
	}
}

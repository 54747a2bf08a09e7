package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"countwall/attacks"
	"countwall/attacks/experiments"
	"countwall/attacks/report"
	"countwall/attacks/runner"
	"countwall/dataset/progress"
)

// newAttacksCmd is `countwall attack`: one subcommand per attack, the
// list, Table 3 and the report card.
func newAttacksCmd() *cobra.Command {
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
	cmd.AddCommand(&cobra.Command{Use: "list", Short: "Describe the attacks", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runner.List(cmd.OutOrStdout()) }})
	cmd.AddCommand(newTable3Cmd(), newReportCmd())
	return cmd
}

// newAttackCmd is `countwall attack NAME`: the flags every attack shares,
// then the attack's own (Attack.Flags), all starting from its demo defaults.
func newAttackCmd(a *attacks.Attack) *cobra.Command {
	o, ro := runner.Defaults(a), runner.Options{}
	cmd := &cobra.Command{
		Use:   a.Name,
		Short: fmt.Sprintf("against %s: %s (%s)", a.Against, a.Summary, a.Source),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ro.Progress = func(sent func() int) (func(done, total int), func(string), func()) {
				return progress.Attack(os.Stderr, a.Name, sent)
			}
			stopProfile, err := startCPUProfile(cmd)
			if err != nil {
				return err
			}
			defer stopProfile()
			ro.Flags = cmd.Flags()
			return runner.Run(cmd.Context(), cmd.OutOrStdout(), a, o, ro)
		},
	}
	runner.AddFlags(cmd.Flags(), a, &o, &ro)
	cmd.Flags().String("cpuprofile", "", "write a CPU profile of the attack to this file")
	addConfigFlags(cmd)
	return cmd
}

func newTable3Cmd() *cobra.Command {
	var o experiments.Table3Options
	cmd := &cobra.Command{
		Use:   "noise-remover-table3",
		Short: "Reproduce Asghar-Kaafar Table 3: the noise remover on the Adult age column under cellkey D = 2, 3, 5",
		Long: `noise-remover-table3 loads the Adult CSV into a temporary SQLite file, fronts its age column
(ages 10..120, 111 values) with cellkey (uniform noise on -D..D, counts <= 4 published as 0)
and runs the noise remover for each D and k, --runs times each with a new firewall secret: one
in-process Engine per (D, run), --parallel of them at once, every query SQL text through the
front door (one run of the table asks 424,932). --simulated has the Engines read the
grouped stand-in (planner/grouped) instead of SQLite: the same answers, without a pass over the
table per query. It prints the mean
values recovered exactly beside the paper's.`,
		Example: "  countwall attack noise-remover-table3 --adult ../shared/data/adult.csv --runs 20",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			o.Progress = progress.Counter(os.Stderr, "table 3")
			res, err := experiments.Table3(ctx, o)
			if err != nil {
				return err
			}
			res.Print(cmd.OutOrStdout())
			return nil
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// newReportCmd prints a report card saved by the demo, or the results that
// `countwall attack --json` wrote, as one card.
func newReportCmd() *cobra.Command {
	var htmlOut, auditPath string
	cmd := &cobra.Command{
		Use:   "report FILE...",
		Short: "Print a report card from the demo's report.json or from attack results written with --json",
		Example: `  countwall demo --dir demo-run && countwall attack report demo-run/report.json
  countwall attack idp-membership --config c.yaml --json a.json && countwall attack report a.json
  countwall audit --config c.yaml --json audit.json && countwall attack report --html card.html --audit audit.json a.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rows, err := report.Read(args...)
			if err != nil {
				return err
			}
			if htmlOut != "" {
				return report.WriteHTMLCard(cmd.OutOrStdout(), htmlOut, rows, auditPath)
			}
			return report.Print(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().StringVar(&htmlOut, "html", "", "write the card as one self-contained HTML page with plots instead of printing it")
	cmd.Flags().StringVar(&auditPath, "audit", "", "an audit written by 'countwall audit --json', shown in the HTML page; beside a run only when audited on the run's config and table (audit --config)")
	return cmd
}

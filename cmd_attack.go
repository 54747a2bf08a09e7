package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"countwall/attacks"
	"countwall/config"
	"countwall/proxy"
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
	var (
		dsn, configPath, analyst string
		sqlLog, truth, jsonOut   string
		emit                     bool
	)
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
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			o.Progress = progressCounter(os.Stderr, a.Name)
			o.Connect = func(ctx context.Context, dsn, config string) (attacks.Querier, func(), error) {
				return openQuerier(ctx, nil, dsn, config, analyst)
			}
			if emit {
				if a.Script == nil {
					return fmt.Errorf("%s is adaptive: its next query depends on the answers, so it has no script to emit", a.Name)
				}
				for _, s := range a.Script(o) {
					fmt.Fprintln(out, s+";")
				}
				return nil
			}
			q, closeQ, err := openQuerier(ctx, cmd, dsn, configPath, analyst)
			if err != nil {
				return err
			}
			defer closeQ()
			logged := &attacks.Logged{Querier: q}
			if sqlLog != "" {
				f, err := os.Create(sqlLog)
				if err != nil {
					return err
				}
				defer f.Close()
				logged.Log = f
			}
			stopProfile, err := startCPUProfile(cmd)
			if err != nil {
				return err
			}
			res, err := attacks.Execute(ctx, a, logged, o, truth)
			stopProfile()
			if err != nil {
				return err
			}
			printAttack(out, res)
			printHistogram(out, res)
			if jsonOut != "" {
				b, err := json.MarshalIndent(res, "", "  ")
				if err != nil {
					return err
				}
				return os.WriteFile(jsonOut, append(b, '\n'), 0o644)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dsn, "dsn", "", "PostgreSQL URL of a running firewall")
	f.StringVar(&configPath, "config", "", "run in process through this config instead of --dsn")
	f.StringVar(&analyst, "analyst", "attacker", "analyst name for in-process runs")
	f.StringVar(&o.Target.Table, "table", o.Target.Table, "target table")
	f.StringVar(&o.Target.Where, "where", o.Target.Where, "target predicate")
	f.StringVar(&sqlLog, "sql-log", "", "write every statement sent to this file")
	f.StringVar(&truth, "truth", "", "protected database, to score the result")
	f.StringVar(&jsonOut, "json", "", "write the result as JSON to this file")
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

func openQuerier(ctx context.Context, cmd *cobra.Command, dsn, configPath, analyst string) (attacks.Querier, func(), error) {
	switch {
	case dsn != "" && configPath != "":
		return nil, nil, errors.New("give --dsn or --config, not both")
	case dsn != "":
		w, err := attacks.Dial(ctx, dsn)
		if err != nil {
			return nil, nil, err
		}
		return w, func() { w.Close() }, nil
	case configPath != "":
		var flags *pflag.FlagSet
		if cmd != nil {
			flags = cmd.Flags()
		}
		cfg, err := config.Load(configPath, flags)
		if err != nil {
			return nil, nil, err
		}
		e, err := proxy.Open(ctx, cfg, proxy.Options{})
		if err != nil {
			return nil, nil, err
		}
		return attacks.InProcess{Session: e.NewSession(analyst)}, func() { e.Close() }, nil
	}
	return nil, nil, errors.New("give --dsn (a running firewall) or --config (in process)")
}

func printAttack(w io.Writer, r *attacks.Result) {
	fmt.Fprintf(w, "attack     %s\ntarget     %s\nestimate   %.2f (recovered %d)\nqueries    %d sent, %d refused\n",
		r.Attack, r.Target, r.Estimate, r.Recovered, r.Queries, r.Refused)
	var spent []string
	for _, k := range []string{"dp", "idp", "bdp"} {
		if v, ok := r.Spent[k]; ok && v > 0 {
			spent = append(spent, fmt.Sprintf("%s epsilon %.4g", k, v))
		}
	}
	if len(spent) == 0 {
		spent = []string{"nothing"}
	}
	fmt.Fprintf(w, "charged    %s (the analyst's total, read back with SHOW budget)\ntime       %.2fs\n", strings.Join(spent, ", "), r.Seconds)
	if v, ok := r.Details["queries_per_person"].(float64); ok {
		fmt.Fprintf(w, "per person %.1f queries\n", v)
	}
	if sample, ok := r.Details["sample"].([]string); ok && len(sample) > 0 {
		fmt.Fprintf(w, "rows       %s, ... (every row with --json)\n", strings.Join(sample, "; "))
	}
	if r.Undecided {
		fmt.Fprintf(w, "verdict    none\n")
	}
	if r.Truth != nil {
		verdict := "not recovered"
		if *r.Exact {
			verdict = "recovered exactly"
		}
		fmt.Fprintf(w, "truth      %d: %s\n", *r.Truth, verdict)
	}
	if r.Note != "" {
		fmt.Fprintf(w, "note       %s\n", r.Note)
	}
}

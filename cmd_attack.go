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

	"countwall/attacks"
	"countwall/config"
	"countwall/proxy"
)

func init() {
	var (
		dsn, configPath, analyst string
		sqlLog, truth, jsonOut   string
		emit                     bool
	)
	cmd := &cobra.Command{
		Use:   "attack NAME",
		Short: "Run an attack program against the firewall and report what it recovered",
		Long: `attack sends an attack's SQL through the firewall's front door, over the wire to a running
firewall (--dsn) or in process through a config (--config), and reports what it recovered, how
many queries it sent and what the firewall charged. Given the protected database (--truth), it
scores itself. 'countwall attack list' describes the attacks.`,
		Example: `  countwall attack differencing --config examples/countwall.yaml --mechanism.name suppress \
      --where "suburb = 'suburb_0015' AND age > 60" --truth examples/demo.db
  countwall attack averaging --dsn "postgres://alice:alice-secret@127.0.0.1:5433/countwall" \
      --where "sex = 'F' AND age BETWEEN 40 AND 44" --sql-log averaging.sql
  countwall attack differencing --emit --where "suburb = 'suburb_0015' AND age > 60" | psql ...`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			out := cmd.OutOrStdout()
			if args[0] == "list" {
				tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
				for _, a := range attacks.All() {
					fmt.Fprintf(tw, "%s\tagainst %s\t%s (%s)\n", a.Name, a.Against, a.Summary, a.Source)
				}
				return tw.Flush()
			}
			a, ok := attacks.Lookup(args[0])
			if !ok {
				return fmt.Errorf("unknown attack %q; 'countwall attack list' shows them", args[0])
			}
			opts, err := attackOptions(cmd, a)
			if err != nil {
				return err
			}
			if err := histogramOptions(cmd, a, &opts); err != nil {
				return err
			}
			if emit {
				if a.Script == nil {
					return fmt.Errorf("%s is adaptive: its next query depends on the answers, so it has no script to emit", a.Name)
				}
				for _, s := range a.Script(opts) {
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
			res, err := attacks.Execute(ctx, a, logged, opts, truth)
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
	f.String("table", "people", "target table")
	f.String("where", "", "target predicate (default: the attack's demo target; 'countwall attack NAME --emit' shows it for scripted attacks)")
	f.StringVar(&sqlLog, "sql-log", "", "write every statement sent to this file")
	f.StringVar(&truth, "truth", "", "protected database, to score the result")
	f.StringVar(&jsonOut, "json", "", "write the result as JSON to this file")
	f.BoolVar(&emit, "emit", false, "print the attack's SQL script instead of running it (non-adaptive attacks)")
	f.Int("max-queries", 0, "stop an adaptive attack after this many queries")
	f.StringArray("cells", nil, "perturbation-finder: cell predicates over disjoint contributors (repeat the flag; default: the 100 most populous suburbs)")
	f.StringArray("split", nil, "perturbation-finder: two predicates that divide every cell (default: sex = 'F' and sex = 'M')")
	addHistogramFlags(cmd)
	addThresholdFlags(cmd)
	addConfigFlags(cmd)
	cmd.AddCommand(newTable3Cmd(), newReportCmd())
	rootCmd.AddCommand(cmd)
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
		cfg, err := config.Load(configPath, cmd.Flags())
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

package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"countwall/attacks"
	"countwall/attacks/report"
)

// addThresholdFlags adds the flags of the threshold attacks (idp-*,
// bdp-existence). None may be named like a config key (see config.Load).
func addThresholdFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArray("domain", nil, "threshold attacks: a column's public domain, col=lo..hi or col=a,b,c (repeat the flag; order matters)")
	f.Int64("group-k", -1, "threshold attacks: the idp group size k to assume (-1: 1 under idp, 0 under anything else, read with SHOW mechanism)")
	f.Float64("epsilon-share", 0, "threshold attacks: the per-query epsilon to ask for with SET epsilon (0: 1e-10)")
	f.Int64("rows", 0, "threshold attacks: the table size when it is known (0: find it with threshold queries)")
	f.Int("m", 0, "idp-variance: how many times the test repeats its query")
	f.String("cpuprofile", "", "write a CPU profile of the attack to this file")
}

// attackOptions starts from the attack's demo defaults and lays over them
// the flags a user set, so that every attack runs on the demo database as it
// is and any flag given overrides.
func attackOptions(cmd *cobra.Command, a *attacks.Attack) (attacks.Options, error) {
	var o attacks.Options
	if a.Demo != nil {
		o = a.Demo()
	}
	f := cmd.Flags()
	if f.Changed("table") || o.Target.Table == "" {
		o.Target.Table, _ = f.GetString("table")
	}
	if f.Changed("where") {
		o.Target.Where, _ = f.GetString("where")
	}
	if f.Changed("cells") {
		o.Cells, _ = f.GetStringArray("cells")
	}
	if f.Changed("split") {
		o.Split, _ = f.GetStringArray("split")
	}
	if f.Changed("max-queries") {
		o.MaxQueries, _ = f.GetInt("max-queries")
	}
	if specs, _ := f.GetStringArray("domain"); len(specs) > 0 {
		o.Domains = nil
		for _, s := range specs {
			dom, err := attacks.ParseDomain(s)
			if err != nil {
				return o, fmt.Errorf("--domain: %w", err)
			}
			o.Domains = append(o.Domains, dom)
		}
	}
	if f.Changed("group-k") {
		o.Threshold.GroupK, _ = f.GetInt64("group-k")
	}
	if f.Changed("epsilon-share") {
		o.Threshold.Epsilon, _ = f.GetFloat64("epsilon-share")
	}
	if f.Changed("rows") {
		o.Threshold.Rows, _ = f.GetInt64("rows")
	}
	if f.Changed("m") {
		o.M, _ = f.GetInt("m")
	}
	o.Progress = terminalProgress(os.Stderr, a.Name)
	return o, nil
}

// startCPUProfile profiles the attack into the --cpuprofile file, if one was
// named; the returned function stops it.
func startCPUProfile(cmd *cobra.Command) (func(), error) {
	path, _ := cmd.Flags().GetString("cpuprofile")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
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
  countwall audit --json audit.json && countwall attack report --html card.html --audit audit.json demo-run/report.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rows []report.Row
			for _, path := range args {
				r, err := report.Read(path)
				if err != nil {
					return err
				}
				rows = append(rows, r...)
			}
			if htmlOut != "" {
				return writeHTMLCard(cmd.OutOrStdout(), htmlOut, rows, auditPath)
			}
			return report.Print(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().StringVar(&htmlOut, "html", "", "write the card as one self-contained HTML page with plots instead of printing it")
	cmd.Flags().StringVar(&auditPath, "audit", "", "an audit written by 'countwall audit --json', shown beside the card in the HTML page")
	return cmd
}

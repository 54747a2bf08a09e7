package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"countwall/attacks/report"
)

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

package main

import (
	"github.com/spf13/cobra"

	"countwall/attacks/report"
)

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
				return report.WriteHTMLCard(cmd.OutOrStdout(), htmlOut, rows, auditPath)
			}
			return report.Print(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().StringVar(&htmlOut, "html", "", "write the card as one self-contained HTML page with plots instead of printing it")
	cmd.Flags().StringVar(&auditPath, "audit", "", "an audit written by 'countwall audit --json', shown beside the card in the HTML page")
	return cmd
}

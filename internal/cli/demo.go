package cli

import (
	"os"

	"github.com/spf13/cobra"

	"countwall/attacks/demo"
	"countwall/dataset/progress"
	"countwall/internal/workdir"
)

// newDemoCmd is `countwall demo`: the mechanisms compared and the attack
// suite run on a generated table.
func newDemoCmd() *cobra.Command {
	var keep string
	var noAttacks bool
	o := demo.Options{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Generate a demo database, compare every mechanism, run the attack suite and print the report card",
		RunE: func(cmd *cobra.Command, args []string) error {
			return workdir.In(keep, "countwall-demo-", func(dir string) error {
				o.Dir, o.Attacks, o.Keep = dir, !noAttacks, keep != ""
				o.Progress = func(label string) func(done, total int) { return progress.Counter(os.Stderr, label) }
				stopProfile, err := startCPUProfile(cmd)
				if err != nil {
					return err
				}
				defer stopProfile()
				return demo.Run(cmd.Context(), cmd.OutOrStdout(), o)
			})
		},
	}
	cmd.Flags().IntVar(&o.Rows, "rows", 20000, "rows in the generated people table")
	cmd.Flags().StringVar(&keep, "dir", "", "keep the demo database, configs and report card in this directory instead of a temporary one")
	cmd.Flags().BoolVar(&noAttacks, "no-attacks", false, "compare the mechanisms only, without the attack suite")
	cmd.Flags().StringVar(&o.HTML, "html", "", "also audit every mechanism and write the report card as one self-contained HTML page with plots")
	cmd.Flags().IntVar(&o.AuditTrials, "audit-trials", 200, "trials per database and test of the audit that --html runs")
	cmd.Flags().String("cpuprofile", "", "write a CPU profile of the demo to this file")
	return cmd
}

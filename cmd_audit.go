package main

import (
	"os"

	"github.com/spf13/cobra"

	"countwall/attacks/audit"
	"countwall/config"
	"countwall/dataset/progress"
	"countwall/internal/workdir"
)

func init() { rootCmd.AddCommand(newAuditCmd()) }

func newAuditCmd() *cobra.Command {
	var (
		o        audit.SuiteOptions
		names    []string
		eps, dlt float64
		jsonOut  string
		keepDir  string
		// --config: the firewall as deployed
		configPath, table string
		unitIndex         int64
	)
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Measure, per mechanism, the privacy loss per person an attacker can demonstrate; 'audit list' reads the audit log",
		Long: `audit deploys each mechanism on two neighbouring databases (a table without and with one
person), runs distinguishing tests many times with fresh noise (and, for sticky mechanisms, a new
firewall secret every trial), and reports a lower bound on epsilon per person from the tests'
error rates with Clopper-Pearson bounds, beside what the mechanism claims.`,
		Example: `  countwall audit
  countwall audit --mechanism laplace --mechanism idp --trials 2000 --json audit.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configPath != "" {
				return runDeployedAudit(cmd, configPath, table, names, unitIndex, o.Trials, o.Confidence, jsonOut, keepDir)
			}
			mechs, err := audit.StandardNamed(names, eps, dlt)
			if err != nil {
				return err
			}
			return workdir.In(keepDir, "countwall-audit-", func(dir string) error {
				o.Dir, o.Mechanisms, o.Progress = dir, mechs, auditProgress
				rep, err := audit.RunSuite(cmd.Context(), o)
				if err != nil {
					return err
				}
				return audit.Output(cmd.OutOrStdout(), rep, jsonOut)
			})
		},
	}
	cmd.AddCommand(newAuditListCmd(), newAuditExportCmd(), newAuditPruneCmd(), newAuditRiskCmd())
	f := cmd.Flags()
	f.StringSliceVar(&names, "mechanism", nil, "audit only these mechanisms (repeatable; default all)")
	f.IntVar(&o.Trials, "trials", 1000, "trials per database and test")
	f.Float64Var(&o.Confidence, "confidence", 0.95, "joint confidence of the bounds")
	f.Float64Var(&eps, "epsilon", 1, "per-query epsilon of laplace and gaussian (idp and bdp get the 1e-10 they reward)")
	f.Float64Var(&dlt, "delta", 1e-5, "per-query delta of gaussian")
	f.Int64Var(&o.Rows, "rows", 200, "people in the audited table")
	f.IntVar(&o.CellRows, "cell", 20, "people sharing the audited person's cell")
	f.StringVar(&jsonOut, "json", "", "also write the audit as JSON (for 'attack report --html --audit')")
	f.StringVar(&keepDir, "dir", "", "keep the neighbouring databases and configs in this directory")
	f.StringVar(&configPath, "config", "", "audit the firewall this config deploys, on neighbours of its own table (its mechanism, parameters, shares, delta cap and bounds)")
	f.StringVar(&table, "table", "", "with --config: the table to audit (the config's only one by default)")
	f.Int64Var(&unitIndex, "unit-index", 0, "with --config: audit the n-th privacy unit in the unit column's order")
	return cmd
}

// runDeployedAudit is `countwall audit --config C`.
func runDeployedAudit(cmd *cobra.Command, configPath, table string, names []string, unitIndex int64, trials int, confidence float64, jsonOut, keepDir string) error {
	cfg, err := config.Load(configPath, nil)
	if err != nil {
		return err
	}
	return workdir.In(keepDir, "countwall-audit-", func(dir string) error {
		rep, err := audit.RunDeployed(cmd.Context(), audit.DeployedOptions{
			Config: cfg, Table: table, Mechanisms: names, UnitIndex: unitIndex, Dir: dir, Trials: trials, Confidence: confidence,
			Progress: auditProgress,
		})
		if err != nil {
			return err
		}
		audit.NameDeployment(rep, configPath, table, cfg)
		return audit.Output(cmd.OutOrStdout(), rep, jsonOut)
	})
}

// auditProgress shows each mechanism's audit on standard error.
func auditProgress(m string) func(done, total int) { return progress.Counter(os.Stderr, "auditing "+m) }

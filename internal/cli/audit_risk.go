package cli

import (
	"context"

	"github.com/spf13/cobra"

	"countwall/attacks/audit"
	"countwall/config"
	"countwall/proxy"
)

// newAuditRiskCmd is `countwall audit risk`: the shipped attacks' solvers
// on what the audit says each analyst was answered.
func newAuditRiskCmd() *cobra.Command {
	var req audit.RiskRequest
	cmd := &cobra.Command{
		Use:   "risk [--analyst A] [--truth DB]",
		Short: "What the answers each analyst was sent determine: the shipped attacks' solvers run offline on the audit",
		Long: `Risk reads the answered statements of the audit (the state database, or files written by
'countwall audit export' with --from) and runs on them, offline, the solvers of the attacks countwall
ships, taking the recorded answers instead of asking: exact answers and threshold searches that pin a
count (differencing, the IDP and BDP searches), the rows a threshold search rebuilt by halving each
column's values (idp-reconstruct) or one person's value of a column (idp-attribute), statements answered many times under fresh noise and a condition's
splits over every way it was written (averaging, split-averaging, the IDP variance test), sums over
sets of a column's values solved by least squares (the noise remover, linear reconstruction), and a
cell asked beside its parts (the perturbation finder's noise bound). Releases made public before by
another firewall (--published: its audit export) are taken as known to every analyst and combined
with her answers, as the prior-release attack combines them; a finding must rest on some answer of
her own. Noisy one-way marginals are flagged; with --truth the tracing attack's test runs on them
with each person of the protected table as a candidate (it needs a sample of the population:
--population). For each analyst it lists the cells the answers determine exactly or within the
stated error (two standard errors), the ones about one person first, with the audit rows they rest
on. It reads no protected data unless --truth is given, and then only to score the findings and to
take the table's people as the tracing test's candidates; its output names individuals and is for
the data owner only.`,
		Example: `  countwall audit risk --config examples/countwall.yaml
  countwall audit risk --state countwall-state.db --analyst mallory --truth examples/demo.db --json risk.json
  countwall audit risk --from alice.jsonl --from bob.jsonl
  countwall audit risk --state laplace-state.db --published exact-release.jsonl --truth examples/demo.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stop, err := startCPUProfile(cmd)
			if err != nil {
				return err
			}
			defer stop()
			req.PlusOneGiven = cmd.Flags().Changed("idp-plus-one")
			reread, err := openRereader(cmd.Context(), req.Selection.ConfigPath)
			if err != nil {
				return err
			}
			if reread != nil {
				defer reread.Close()
				req.Reread = reread.Fill
			}
			return audit.Risk(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), req)
		},
	}
	req.AddFlags(cmd.Flags())
	cmd.Flags().String("cpuprofile", "", "write a CPU profile of the check to this file")
	return cmd
}

// openRereader reads, with the config's catalog, the answered rows written
// before the audit kept their structured record; nil without a config.
func openRereader(ctx context.Context, configPath string) (*proxy.Rereader, error) {
	if configPath == "" {
		return nil, nil
	}
	cfg, err := config.Load(configPath, nil)
	if err != nil {
		return nil, err
	}
	return proxy.OpenRereader(ctx, cfg)
}

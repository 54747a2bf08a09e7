package main

import (
	"github.com/spf13/cobra"

	"countwall/attacks/audit"
	"countwall/attacks/risk"
)

// newAuditRiskCmd is `countwall audit risk`: the shipped attacks' solvers
// on what the audit says each analyst was answered.
func newAuditRiskCmd() *cobra.Command {
	var req audit.RiskRequest
	sel, o := &req.Selection, &req.Options
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
			return audit.Risk(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), req)
		},
	}
	f := cmd.Flags()
	auditSelectionFlags(f, sel)
	f.StringSliceVar(&req.From, "from", nil, "read JSON lines written by 'audit export' instead of a state database (repeatable)")
	f.StringSliceVar(&req.Published, "published", nil, "releases made public before (an 'audit export' of another firewall): every analyst is taken to know them, and they are combined with her answers (repeatable)")
	f.StringVar(&req.Truth, "truth", "", "the protected SQLite database, to score each finding")
	f.StringVar(&req.JSON, "json", "", "write every finding as JSON to this file")
	f.StringVar(&o.Trace.Population, "population", "", "samples of the population the table was drawn from, for the tracing test with --truth (default: the file `gen genomes` writes beside it)")
	f.IntVar(&o.MinRepeats, "min-repeats", 10, "answers (or splits) averaged before a finding is drawn")
	f.Float64Var(&o.MaxError, "max-error", 1, "the widest error (two standard errors) of an averaged or solved count reported")
	f.Float64Var(&o.MaxCell, "max-cell", 10, "the largest pinned count reported (small cells are what is protected)")
	f.String("cpuprofile", "", "write a CPU profile of the check to this file")
	f.StringVar(&req.MemProfile, "memprofile", "", "write a heap profile (go tool pprof -sample_index=alloc_space) to this file at the end")
	f.IntVar(&o.MaxRowsAnswers, "rows-limit", risk.DefaultMaxRowsAnswers, "the most answers of one analyst the row reconstruction takes (it holds about 10 KB an answer); beyond it the analyst is assessed without it")
	f.BoolVar(&o.IDPPlusOne, "idp-plus-one", false, "the idp mechanism ran with plus_one (read from --config when given)")
	return cmd
}

package demo

import (
	"context"
	"path/filepath"
	"sort"

	"countwall/attacks/report"
	"countwall/attacks/risk"
	"countwall/proxy/state"
	"countwall/proxy/state/release"
)

// assessState is `countwall audit risk` on one firewall's state database
// after its run: every analyst's answered statements, the solvers, the
// findings scored against the protected table.
func assessState(ctx context.Context, label, statePath, truthPath string, plusOne bool) (report.RiskRun, error) {
	run := report.RiskRun{Setting: label}
	st, err := state.Open(ctx, statePath, state.Options{})
	if err != nil {
		return run, err
	}
	defer st.Close()
	var rs []release.Release
	seen := map[string]bool{}
	err = st.EachAudit(ctx, state.AuditFilter{AnsweredOnly: true}, func(e state.AuditEntry) error {
		rs = append(rs, e.Release())
		if !seen[e.Analyst] {
			seen[e.Analyst] = true
			run.Analysts = append(run.Analysts, e.Analyst)
		}
		return nil
	})
	if err != nil {
		return run, err
	}
	sort.Strings(run.Analysts)
	o := risk.Options{IDPPlusOne: plusOne}
	run.Reports = risk.Assess(rs, o)
	if err := risk.Score(ctx, truthPath, run.Reports); err != nil {
		return run, err
	}
	return run, risk.Trace(ctx, truthPath, rs, run.Reports, o)
}

// assessOrdinary runs the risk check on the states of the mechanisms the
// demo compared with its ordinary queries, where it must find nothing.
func assessOrdinary(ctx context.Context, dir, truthPath string) ([]report.RiskRun, error) {
	var runs []report.RiskRun
	for _, m := range mechanisms {
		run, err := assessState(ctx, m.name+" (ordinary queries)", filepath.Join(dir, "state-"+m.name+".db"), truthPath, false)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}

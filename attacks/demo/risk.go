package demo

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"countwall/attacks/audit"
	"countwall/attacks/report"
	"countwall/proxy/risk"
	"countwall/proxy/state"
	"countwall/proxy/state/release"
)

// published is a release made before by another firewall: the answers it
// gave one analyst, read from its audit, which the prior-release attack
// combines with this firewall's.
type published struct {
	source   string // as the card names it
	releases []release.Release
}

// readPublished reads what the firewall whose state is at statePath
// answered analyst.
func readPublished(ctx context.Context, label, statePath, analyst string) (*published, error) {
	rs, _, err := readState(ctx, statePath, analyst)
	if err != nil {
		return nil, err
	}
	return &published{source: fmt.Sprintf("%d answers of the %s firewall to %s", len(rs), label, analyst), releases: rs}, nil
}

// readState reads the answered statements of a state database (of one
// analyst, or all when analyst is ""), and the analysts who sent them.
func readState(ctx context.Context, statePath, analyst string) ([]release.Release, []string, error) {
	st, err := state.Open(ctx, statePath, state.Options{})
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	var rs []release.Release
	var analysts []string
	seen := map[string]bool{}
	err = st.EachAudit(ctx, state.AuditFilter{AnsweredOnly: true, Analyst: analyst}, func(e state.AuditEntry) error {
		rs = append(rs, e.Release())
		if !seen[e.Analyst] {
			seen[e.Analyst] = true
			analysts = append(analysts, e.Analyst)
		}
		return nil
	})
	sort.Strings(analysts)
	return rs, analysts, err
}

// assessStates is `countwall audit risk` on each firewall's state database
// of ps after its run: every analyst's answered statements, combined with
// the published release pub where p.prior, the solvers, the findings
// scored against the protected table and the tracing test run on its
// people. These are audit.EvaluateRisk's steps, with the states read and
// assessed two at a time and the findings of every state on one protected
// table scored together: the scorers copy and index that table once for
// all of them, not once a state.
func assessStates(ctx context.Context, ps []riskPending, pub *published) ([]report.RiskRun, error) {
	runs := make([]report.RiskRun, len(ps))
	histories := make([]*risk.History, len(ps))
	err := eachAtOnce(ctx, len(ps), suiteWidth, func(ctx context.Context, i int) error {
		var err error
		if runs[i], histories[i], err = assessHistory(ctx, ps[i], pub); err != nil {
			return fmt.Errorf("audit risk on the %s firewall: %w", ps[i].label, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The reports are copied into one list per table, but their findings
	// are not: Score marks each finding where it lies, in runs.
	var truths []string
	byTruth := map[string][]risk.Report{}
	for i, p := range ps {
		if _, ok := byTruth[p.truthPath]; !ok {
			truths = append(truths, p.truthPath)
		}
		byTruth[p.truthPath] = append(byTruth[p.truthPath], runs[i].Reports...)
	}
	for _, truth := range truths {
		if err := audit.Score(ctx, truth, byTruth[truth]); err != nil {
			return nil, fmt.Errorf("audit risk: scoring against %s: %w", filepath.Base(truth), err)
		}
	}
	for i, p := range ps {
		if err := audit.TraceHistory(ctx, p.truthPath, histories[i], runs[i].Reports, audit.TraceOptions{}); err != nil {
			return nil, fmt.Errorf("audit risk on the %s firewall: %w", p.label, err)
		}
	}
	return runs, nil
}

// assessHistory reads the state database of p and assesses its history,
// with pub beside it where p.prior; the findings are not yet scored.
func assessHistory(ctx context.Context, p riskPending, pub *published) (report.RiskRun, *risk.History, error) {
	run := report.RiskRun{Setting: p.label}
	rs, analysts, err := readState(ctx, p.statePath, "")
	if err != nil {
		return run, nil, err
	}
	run.Analysts = analysts
	o := risk.Options{IDPPlusOne: p.plusOne}
	if p.prior && pub != nil {
		o.Published, run.Published = pub.releases, pub.source
	}
	h := risk.HistoryOf(rs, "")
	run.Reports = risk.AssessHistory(h, o)
	return run, h, nil
}

// assessOrdinary runs the risk check on the states of the mechanisms the
// demo compared with its ordinary queries, where it must find nothing, even
// beside the published release.
func assessOrdinary(ctx context.Context, dir, truthPath string, pub *published) ([]report.RiskRun, error) {
	ps := make([]riskPending, len(mechanisms))
	for i, m := range mechanisms {
		ps[i] = riskPending{label: m.name + " (ordinary queries)", statePath: filepath.Join(dir, "state-"+m.name+".db"), truthPath: truthPath, prior: true}
	}
	return assessStates(ctx, ps, pub)
}

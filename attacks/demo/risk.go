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

// assessState is `countwall audit risk` on one firewall's state database
// after its run: every analyst's answered statements, combined with the
// published release when there is one, the solvers, the findings scored
// against the protected table and the tracing test run on its people.
func assessState(ctx context.Context, label, statePath, truthPath string, plusOne bool, pub *published) (report.RiskRun, error) {
	run := report.RiskRun{Setting: label}
	rs, analysts, err := readState(ctx, statePath, "")
	if err != nil {
		return run, err
	}
	run.Analysts = analysts
	o := risk.Options{IDPPlusOne: plusOne}
	if pub != nil {
		o.Published, run.Published = pub.releases, pub.source
	}
	run.Reports, err = audit.EvaluateRisk(ctx, risk.HistoryOf(rs, ""), o, audit.TraceOptions{}, truthPath)
	return run, err
}

// assessOrdinary runs the risk check on the states of the mechanisms the
// demo compared with its ordinary queries, where it must find nothing, even
// beside the published release.
func assessOrdinary(ctx context.Context, dir, truthPath string, pub *published) ([]report.RiskRun, error) {
	var runs []report.RiskRun
	for _, m := range mechanisms {
		run, err := assessState(ctx, m.name+" (ordinary queries)", filepath.Join(dir, "state-"+m.name+".db"), truthPath, false, pub)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}

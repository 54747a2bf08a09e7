// Package monitor is serve's background risk check (`monitor:` in the
// config): every so often it reads, for each analyst who was answered
// since the last check, everything the audit says that analyst was
// answered, runs the solvers of `countwall audit risk` on it, logs what
// they find (patterns and counts, never a value), tells a hook (for a
// metric) and, where the owner asks, suspends an analyst whose answers
// already determine an individual.
//
// Every decision depends only on the statements and answers already
// released: the monitor reads the audit and nothing else (its Source has
// no other method), so two firewalls over neighbouring databases that
// released the same answers decide the same. A suspension computed from
// the protected data would itself leak (Kenthapadi, Mishra and Nissim on
// simulatable auditing).
package monitor

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"countwall/proxy/risk"
	"countwall/proxy/state"
	"countwall/proxy/state/release"
)

// Source is where the monitor reads what was released: the Engine's audit.
type Source interface {
	EachAudit(ctx context.Context, f state.AuditFilter, fn func(state.AuditEntry) error) error
}

// Suspender suspends an analyst: the Engine.
type Suspender interface {
	Suspend(analyst, reason string)
}

// Options tune the monitor.
type Options struct {
	// Every is how often Run checks.
	Every time.Duration
	// Suspend suspends an analyst whose answers determine an individual.
	Suspend bool
	// MaxHistory, when above 0, is how many of an analyst's latest answered
	// statements a check reads: the solvers hold them in memory, inside
	// serve. An analyst with more is judged on that window (Decision.Window).
	MaxHistory int
	// Risk tunes the solvers.
	Risk risk.Options
	// Logger receives one line per analyst with findings.
	Logger *slog.Logger
	// OnDecision, when set, is told every decision (for a metric).
	OnDecision func(Decision)
}

// Decision is what one check concluded about one analyst.
type Decision struct {
	Analyst     string
	Answered    int    // answered statements read
	Findings    int    // counts (or parameters) the answers determine
	Individuals int    // of which about one person
	Patterns    string // which patterns, with counts
	Suspend     bool
	// Window says the check read Options.MaxHistory statements, the most
	// it reads: the analyst's older ones, if any, were left out.
	Window bool
	Took   time.Duration // the check of this analyst: reading the audit and the solvers
}

// Monitor checks analysts' released answers.
type Monitor struct {
	src    Source
	sus    Suspender
	o      Options
	lastID int64 // the last audit row read by a check
}

// New makes a monitor reading src; sus may be nil when nothing is
// suspended.
func New(src Source, sus Suspender, o Options) *Monitor {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Monitor{src: src, sus: sus, o: o}
}

// Decide is the monitor's decision on releases alone: per analyst with
// findings, what they are, and whether to suspend (suspend set and at
// least one finding about one person).
func Decide(rs []release.Release, o risk.Options, suspend bool) []Decision {
	return decideHistory(risk.HistoryOf(rs, o.Analyst), o, suspend)
}

// decideHistory is Decide on the statements read into h.
func decideHistory(h *risk.History, o risk.Options, suspend bool) []Decision {
	var out []Decision
	for _, r := range risk.AssessHistory(h, o) {
		d := Decision{Analyst: r.Analyst, Answered: r.Answered, Findings: len(r.Findings), Individuals: r.Individuals(),
			Patterns: risk.PatternCounts(r.Findings)}
		d.Suspend = suspend && d.Individuals > 0
		out = append(out, d)
	}
	return out
}

// Check reads the analysts answered since the last check, decides on
// each one's whole history, acts on the decisions and returns them.
func (m *Monitor) Check(ctx context.Context) ([]Decision, error) {
	fresh := map[string]bool{}
	last := m.lastID
	err := m.src.EachAudit(ctx, state.AuditFilter{AfterID: m.lastID, AnsweredOnly: true}, func(e state.AuditEntry) error {
		fresh[e.Analyst] = true
		last = max(last, e.ID)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("risk monitor: %w", err)
	}
	names := make([]string, 0, len(fresh))
	for a := range fresh {
		names = append(names, a)
	}
	sort.Strings(names)
	var decisions []Decision
	for _, a := range names {
		start := time.Now()
		// Read one statement at a time into answers: the releases
		// themselves are not all held while the solvers run.
		h, n := risk.NewHistory(m.o.Risk.Analyst), 0
		err := m.src.EachAudit(ctx, state.AuditFilter{Analyst: a, AnsweredOnly: true, Last: m.o.MaxHistory}, func(e state.AuditEntry) error {
			n++
			h.Add(e.Release())
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("risk monitor: %w", err)
		}
		window := m.o.MaxHistory > 0 && n >= m.o.MaxHistory
		for _, d := range decideHistory(h, m.o.Risk, m.o.Suspend) {
			d.Took, d.Window = time.Since(start), window
			decisions = append(decisions, d)
		}
	}
	m.lastID = last
	for _, d := range decisions {
		m.act(d)
	}
	return decisions, nil
}

func (m *Monitor) act(d Decision) {
	m.o.Logger.Warn("risk monitor: released answers determine counts", "analyst", d.Analyst, "answered", d.Answered,
		"findings", d.Findings, "about_one_person", d.Individuals, "patterns", d.Patterns, "suspend", d.Suspend, "latest_only", d.Window, "took", d.Took.Round(time.Millisecond))
	if m.o.OnDecision != nil {
		m.o.OnDecision(d)
	}
	if d.Suspend && m.sus != nil {
		m.sus.Suspend(d.Analyst, fmt.Sprintf("%s about one person: %s", risk.Findings(d.Individuals), d.Patterns))
	}
}

// busyShare bounds the monitor's share of the time: after a check that
// took d, the next waits at least d*busyShare, so that re-reading a long
// history never takes more than about a tenth of one core from serve.
const busyShare = 10

// Run checks every o.Every (or, after a long check, busyShare times as
// long as it took) until ctx is done, logging a failed check.
func (m *Monitor) Run(ctx context.Context) {
	for {
		start := time.Now()
		if _, err := m.Check(ctx); err != nil && ctx.Err() == nil {
			m.o.Logger.Error("risk monitor check failed", "err", err)
		}
		wait := max(m.o.Every, busyShare*time.Since(start))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

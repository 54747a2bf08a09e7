package audit

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"countwall/internal/profile"
	"countwall/proxy/admin"
	"countwall/proxy/risk"
	"countwall/proxy/state/release"

	"github.com/spf13/pflag"
)

// RiskRequest is what `countwall audit risk` was asked.
type RiskRequest struct {
	Selection admin.AuditSelection
	From      []string // audit exports read instead of a state database
	Published []string // exports of releases made public before
	Options   risk.Options
	// Trace is how the tracing test runs with --truth.
	Trace TraceOptions
	// PlusOneGiven says --idp-plus-one was given, so the config's idp
	// plus_one does not replace it.
	PlusOneGiven bool
	Truth, JSON  string
	// MemProfile names a file for the heap profile at the end.
	MemProfile string
	// Reread, when set, gives an answered release written before the
	// audit kept its structured record one, read again from its text, and
	// says whether it could (proxy.Rereader.Fill).
	Reread func(*release.Release) bool
}

// riskGCPercent is the garbage collector's GOGC while `audit risk` runs
// (unless GOGC is set): the row reconstruction of a whole threshold
// search holds gigabytes, and at Go's 100 the heap grows to twice that
// before it is collected. At 50 the 15,000-row bank's history is assessed
// in 1.6 GB instead of 2.1, for a sixth more CPU.
const riskGCPercent = 50

// riskRowsGCPercent is GOGC while the row reconstruction runs (unless
// GOGC is set): its boxes, parts, tables and packed answers hold no
// pointers, so a collection there marks few objects, and run often it keeps
// the peak of the run near what is live.
const riskRowsGCPercent = 20

// riskMemoryLimit is the Go runtime's soft memory limit while `audit risk`
// runs (unless GOMEMLIMIT is set): near the row reconstruction's peak the
// collector runs as often as it must to keep the process within it, where
// at GOGC 50 alone the heap would grow to half as much again as is live.
// Past it, with more live than that, the collector's share of the CPU is
// capped and the process grows on. It leaves room below 2 GB for what the
// collector does not count: SQLite's pages and the scorers' copies.
const riskMemoryLimit = 1600 << 20

// Risk reads the selected audit one statement at a time into a
// risk.History (the releases are not all held), fills what the config
// knows into the options, runs the solvers and prints their reports to
// out; what it read, and how long that took, goes to log.
func Risk(ctx context.Context, out, log io.Writer, req RiskRequest) error {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(riskGCPercent))
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(riskMemoryLimit))
	}
	start := time.Now()
	o := req.Options
	if os.Getenv("GOGC") == "" {
		o.RowsGCPercent = riskRowsGCPercent
	}
	h := risk.NewHistory(req.Selection.Analyst)
	n, stale := 0, 0
	cfg, err := admin.EachRelease(ctx, req.Selection, req.From, func(r release.Release) error {
		n++
		if req.Reread != nil && !req.Reread(&r) {
			stale++
		}
		h.Add(r)
		return nil
	})
	if err != nil {
		return err
	}
	if stale > 0 {
		fmt.Fprintf(log, "audit risk: %d answered statements from before the audit kept their structure no longer validate against the config's catalog\n", stale)
	}
	if cfg != nil {
		if !req.PlusOneGiven {
			o.IDPPlusOne = cfg.IDPPlusOne()
		}
		req.Trace.Units = map[string]string{}
		for name, t := range cfg.Tables {
			req.Trace.Units[name] = t.PrivacyUnit
		}
		o.Domains = admin.RiskDomains(cfg)
	}
	o.Analyst = req.Selection.Analyst
	if o.Published, err = admin.ReadExports(req.Published); err != nil {
		return err
	}
	fmt.Fprintf(log, "audit risk: %d statements read in %s\n", n, time.Since(start).Round(time.Millisecond))
	if u := h.Unread(); u > 0 {
		fmt.Fprintf(log, "audit risk: %d answered statements have no structured record and were not assessed\n", u)
	}
	if err := runRisk(ctx, out, h, req, o); err != nil {
		return err
	}
	return profile.WriteHeap(req.MemProfile)
}

// AddFlags defines the flags of `audit risk` on f (all but --cpuprofile,
// which its command handles).
func (req *RiskRequest) AddFlags(f *pflag.FlagSet) {
	o := &req.Options
	req.Selection.AddFlags(f)
	f.StringSliceVar(&req.From, "from", nil, "read JSON lines written by 'audit export' instead of a state database (repeatable)")
	f.StringSliceVar(&req.Published, "published", nil, "releases made public before (an 'audit export' of another firewall): every analyst is taken to know them, and they are combined with her answers (repeatable)")
	f.StringVar(&req.Truth, "truth", "", "the protected SQLite database, to score each finding")
	f.StringVar(&req.JSON, "json", "", "write every finding as JSON to this file")
	f.StringVar(&req.Trace.Population, "population", "", "samples of the population the table was drawn from, for the tracing test with --truth (default: the file `gen genomes` writes beside it)")
	f.IntVar(&o.MinRepeats, "min-repeats", 10, "answers (or splits) averaged before a finding is drawn")
	f.Float64Var(&o.MaxError, "max-error", 1, "the widest error (two standard errors) of an averaged or solved count reported")
	f.Float64Var(&o.MaxCell, "max-cell", 10, "the largest pinned count reported (small cells are what is protected)")
	f.StringVar(&req.MemProfile, "memprofile", "", "write a heap profile (go tool pprof -sample_index=alloc_space) to this file at the end")
	f.IntVar(&o.MaxRowsAnswers, "rows-limit", risk.DefaultMaxRowsAnswers, "the most answers of one analyst the row reconstruction takes (it holds about 0.8 KB an answer); beyond it the analyst is assessed without it")
	f.BoolVar(&o.IDPPlusOne, "idp-plus-one", false, "the idp mechanism ran with plus_one (read from --config when given)")
}

package audit

import (
	"context"
	"fmt"
	"io"
	"time"

	"countwall/attacks/risk"
	"countwall/internal/profile"
	"countwall/proxy/admin"
	"countwall/proxy/state/release"
)

// RiskRequest is what `countwall audit risk` was asked.
type RiskRequest struct {
	Selection admin.AuditSelection
	From      []string // audit exports read instead of a state database
	Published []string // exports of releases made public before
	Options   risk.Options
	// PlusOneGiven says --idp-plus-one was given, so the config's idp
	// plus_one does not replace it.
	PlusOneGiven bool
	Truth, JSON  string
	// MemProfile names a file for the heap profile at the end.
	MemProfile string
}

// Risk reads the selected audit one statement at a time into a
// risk.History (the releases are not all held), fills what the config
// knows into the options, runs the solvers and prints their reports to
// out; what it read, and how long that took, goes to log.
func Risk(ctx context.Context, out, log io.Writer, req RiskRequest) error {
	start := time.Now()
	o := req.Options
	h := risk.NewHistory(req.Selection.Analyst)
	n := 0
	cfg, err := admin.EachRelease(ctx, req.Selection, req.From, func(r release.Release) error {
		n++
		h.Add(r)
		return nil
	})
	if err != nil {
		return err
	}
	if cfg != nil {
		if !req.PlusOneGiven {
			o.IDPPlusOne = cfg.IDPPlusOne()
		}
		o.Trace.Units = map[string]string{}
		for name, t := range cfg.Tables {
			o.Trace.Units[name] = t.PrivacyUnit
		}
	}
	o.Analyst = req.Selection.Analyst
	if o.Published, err = admin.ReadExports(req.Published); err != nil {
		return err
	}
	fmt.Fprintf(log, "audit risk: %d statements read in %s\n", n, time.Since(start).Round(time.Millisecond))
	if err := risk.Run(ctx, out, h, o, req.Truth, req.JSON); err != nil {
		return err
	}
	return profile.WriteHeap(req.MemProfile)
}

package admin

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"countwall/config"
	"countwall/proxy/state"
	"countwall/proxy/state/release"

	"github.com/spf13/pflag"
)

// AuditSelection names a state database (directly or through a config) and
// the audited statements to read from it: `countwall audit list`, `export`
// and `risk` take it from their flags.
type AuditSelection struct {
	StatePath, ConfigPath string
	Analyst               string // "" for every analyst
	Since                 string // RFC 3339, or a duration back from now; "" for all
}

// open opens the state database and reads Since.
func (sel AuditSelection) open(ctx context.Context) (*state.DB, *config.Config, state.AuditFilter, error) {
	from, err := state.ParseSince(sel.Since, time.Now())
	if err != nil {
		return nil, nil, state.AuditFilter{}, err
	}
	st, cfg, err := OpenState(ctx, sel.StatePath, sel.ConfigPath)
	if err != nil {
		return nil, nil, state.AuditFilter{}, err
	}
	return st, cfg, state.AuditFilter{Analyst: sel.Analyst, Since: from}, nil
}

// ListAudit prints the selected statements, the most recent last (at most
// last of them when last > 0).
func ListAudit(ctx context.Context, w io.Writer, sel AuditSelection, last int) error {
	st, _, filter, err := sel.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	filter.Last = last
	entries, err := st.ListAudit(ctx, filter)
	if err != nil {
		return err
	}
	return state.WriteAuditTable(w, entries)
}

// ExportAudit writes the selected statements as JSON lines to w, or to the
// file out when it is named, and returns how many it wrote. The ledger is
// not read.
func ExportAudit(ctx context.Context, w io.Writer, sel AuditSelection, out string) (int, error) {
	st, _, filter, err := sel.open(ctx)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return 0, fmt.Errorf("creating export file: %w", err)
		}
		defer f.Close()
		w = f
	}
	return st.ExportAudit(ctx, w, filter)
}

// PruneAudit deletes the audit rows older than olderThan, or than the
// config's audit.retain when olderThan is 0, and returns how many and the
// age used. The ledger is not touched.
func PruneAudit(ctx context.Context, statePath, configPath string, olderThan time.Duration) (int64, time.Duration, error) {
	st, cfg, err := OpenState(ctx, statePath, configPath)
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	if olderThan == 0 && cfg != nil {
		olderThan = cfg.Audit.Retain
	}
	if olderThan <= 0 {
		return 0, 0, fmt.Errorf("--older-than must be a positive duration such as 2160h (or set audit.retain in the config)")
	}
	n, err := st.PruneAudit(ctx, time.Now().Add(-olderThan))
	return n, olderThan, err
}

// ReadExports reads the statements of files written by `countwall audit
// export`, in order.
func ReadExports(paths []string) ([]release.Release, error) {
	var all []release.Release
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("reading audit export: %w", err)
		}
		rs, err := release.Read(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		all = append(all, rs...)
	}
	return all, nil
}

// EachRelease calls fn with each answered statement, one at a time, from
// files written by `audit export` when from names any, else from the
// selected state database, whose config is returned when one was read. A
// reader that keeps less than a release of each (audit risk) need not hold
// them all.
func EachRelease(ctx context.Context, sel AuditSelection, from []string, fn func(release.Release) error) (*config.Config, error) {
	if len(from) > 0 {
		all, err := ReadExports(from)
		if err != nil {
			return nil, err
		}
		for _, r := range all {
			if err := fn(r); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	st, cfg, filter, err := sel.open(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	filter.AnsweredOnly = true
	err = st.EachAudit(ctx, filter, func(e state.AuditEntry) error {
		return fn(e.Release())
	})
	return cfg, err
}

// AddFlags defines on f the flags by which the audit commands find the
// state database and select statements.
func (sel *AuditSelection) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&sel.StatePath, "state", "", "state database (or give --config)")
	f.StringVar(&sel.ConfigPath, "config", "", "config file whose state database to read")
	f.StringVar(&sel.Analyst, "analyst", "", "only this analyst's statements")
	f.StringVar(&sel.Since, "since", "", "only statements from this time on: RFC 3339 (2026-11-23T09:00:00Z) or a duration back from now (1h)")
}

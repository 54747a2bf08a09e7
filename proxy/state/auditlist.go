package state

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// ParseSince reads the --since of `countwall audit list`: an RFC 3339 time
// (2026-11-23T10:00:00Z) or a duration back from now (90m, 1h, 36h).
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("--since %q: want an RFC 3339 time such as 2026-11-23T10:00:00Z or a duration such as 1h", s)
	}
	return now.Add(-d), nil
}

// WriteAuditTable prints entries as aligned columns: time, analyst,
// outcome (answered, or the refusal's SQLSTATE), fingerprint, mechanism,
// charge.
func WriteAuditTable(w io.Writer, entries []AuditEntry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "time\tanalyst\toutcome\tfingerprint\tmechanism\tcharge")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.At.UTC().Format("2006-01-02T15:04:05.000Z07:00"), e.Analyst, auditOutcome(e),
			e.Fingerprint, e.Mechanism, auditCharge(e))
	}
	return tw.Flush()
}

func auditOutcome(e AuditEntry) string {
	if e.Outcome == OutcomeRefused && e.SQLState != "" {
		return "refused " + e.SQLState
	}
	return e.Outcome
}

func auditCharge(e AuditEntry) string {
	if e.ChargeKind == "" {
		return "-"
	}
	c := e.ChargeKind + " epsilon " + strconv.FormatFloat(e.Epsilon, 'g', -1, 64)
	if e.Delta > 0 {
		c += " delta " + strconv.FormatFloat(e.Delta, 'g', -1, 64)
	}
	return c
}

// AuditLog returns the most recent entries, newest last.
func (s *DB) AuditLog(ctx context.Context, limit int) ([]AuditEntry, error) {
	return s.ListAudit(ctx, AuditFilter{Last: limit})
}

// AuditFilter selects audit entries; the zero value selects all.
type AuditFilter struct {
	Analyst string    // only this analyst's entries, when set
	Since   time.Time // only entries at or after it, when set
	Before  time.Time // only entries before it, when set
	Last    int       // only the most recent Last entries, when > 0
	// AnsweredOnly keeps answered statements only.
	AnsweredOnly bool
}

// ListAudit returns the entries the filter selects, oldest first.
func (s *DB) ListAudit(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	where, args := auditWhere(f)
	limit := ""
	if f.Last > 0 {
		limit = " LIMIT ?"
		args = append(args, f.Last)
	}
	rows, err := s.sql.QueryContext(ctx, `SELECT * FROM (SELECT `+auditColumns+` WHERE `+where+` ORDER BY l.id DESC`+limit+`) AS recent ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("reading audit log: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("reading audit log: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading audit log: %w", err)
	}
	return out, nil
}

package state

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"countwall/proxy/state/release"
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
// outcome (answered, or the refusal's SQLSTATE), fingerprint ("-" for a
// row that records its statement instead), mechanism, charge; and, when
// any entry recorded one, the statement and what was released.
func WriteAuditTable(w io.Writer, entries []AuditEntry) error {
	withStatements := false
	for _, e := range entries {
		withStatements = withStatements || e.Shape != ""
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "time\tanalyst\toutcome\tfingerprint\tmechanism\tcharge"
	if withStatements {
		header += "\tstatement\treleased"
	}
	fmt.Fprintln(tw, header)
	for _, e := range entries {
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", e.At.UTC().Format("2006-01-02T15:04:05.000Z07:00"), e.Analyst, auditOutcome(e),
			orDash(e.Fingerprint), e.Mechanism, auditCharge(e))
		if withStatements {
			line += "\t" + orDash(e.Release().Statement()) + "\t" + orDash(releasedText(e.Cells))
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// releasedText is the cells sent, as `audit list` prints them: the value
// of a single count, else group=value pairs.
func releasedText(cells []release.Cell) string {
	parts := make([]string, 0, len(cells))
	for _, c := range cells {
		v := strconv.FormatFloat(c.Value, 'g', -1, 64)
		if c.Suppressed {
			v += " (suppressed)"
		}
		if len(c.Group) == 0 {
			parts = append(parts, v)
			continue
		}
		keys := make([]string, len(c.Group))
		for i, g := range c.Group {
			keys[i] = g.Text
			if g.Null {
				keys[i] = "NULL"
			}
		}
		parts = append(parts, strings.Join(keys, ",")+"="+v)
	}
	return strings.Join(parts, " ")
}

func auditOutcome(e AuditEntry) string {
	if e.Outcome == OutcomeRefused && e.SQLState != "" {
		return "refused " + e.SQLState
	}
	return e.Outcome.String()
}

func auditCharge(e AuditEntry) string {
	if e.ChargeKind == "" {
		return "-"
	}
	c := e.ChargeKind + " epsilon " + strconv.FormatFloat(e.Epsilon, 'g', -1, 64)
	if e.Delta > 0 {
		c += " delta " + strconv.FormatFloat(e.Delta, 'g', -1, 64)
	}
	if e.Rho > 0 {
		c += " rho " + strconv.FormatFloat(e.Rho, 'g', -1, 64)
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
	AfterID int64     // only entries with a greater id, when > 0
	Last    int       // only the most recent Last entries, when > 0
	// AnsweredOnly keeps answered statements only.
	AnsweredOnly bool
}

// ListAudit returns the entries the filter selects, oldest first.
func (s *DB) ListAudit(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	var out []AuditEntry
	err := s.EachAudit(ctx, f, func(e AuditEntry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// EachAudit calls fn with each entry the filter selects, oldest first,
// without holding them all in memory: an export or a risk check of
// millions of statements streams through it. An error from fn stops it.
func (s *DB) EachAudit(ctx context.Context, f AuditFilter, fn func(AuditEntry) error) error {
	where, args := auditWhere(f)
	query := `SELECT ` + auditColumns + ` WHERE ` + where + ` ORDER BY l.id`
	if f.Last > 0 {
		query = `SELECT * FROM (SELECT ` + auditColumns + ` WHERE ` + where + ` ORDER BY l.id DESC LIMIT ?) AS recent ORDER BY id`
		args = append(args, f.Last)
	}
	rows, err := s.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("reading audit log: %w", err)
	}
	defer rows.Close()
	queries := &queryReader{resolve: s.textResolver(ctx)}
	for rows.Next() {
		e, err := scanEntry(rows, queries)
		if err != nil {
			return fmt.Errorf("reading audit log: %w", err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading audit log: %w", err)
	}
	return nil
}

// Release is the entry in the form `countwall audit export` writes and the
// risk check reads.
func (e AuditEntry) Release() release.Release {
	return release.Release{ID: e.ID, At: e.At, Analyst: e.Analyst, Kind: e.Kind, Mechanism: e.Mechanism,
		Outcome: e.Outcome, SQLState: e.SQLState, Reason: e.Reason, Fingerprint: e.Fingerprint,
		ChargeKind: e.ChargeKind, Epsilon: e.Epsilon, Delta: e.Delta, Rho: e.Rho,
		Shape: e.Shape, Constants: e.Constants, Query: e.Query, Cells: e.Cells}
}

// ExportAudit writes the entries the filter selects as JSON lines
// (release.Write's form) and says how many. It reads the audit tables
// only: the ledger is not touched.
func (s *DB) ExportAudit(ctx context.Context, w io.Writer, f AuditFilter) (int, error) {
	n := 0
	err := s.EachAudit(ctx, f, func(e AuditEntry) error {
		n++
		return release.Write(w, []release.Release{e.Release()})
	})
	return n, err
}

// PruneAudit deletes the audit rows written before cutoff and says how
// many: the retention of audit.retain. The budget ledger, which holds its
// own record of every charge, is not touched; the interned contexts and
// shapes stay (they are few).
func (s *DB) PruneAudit(ctx context.Context, cutoff time.Time) (int64, error) {
	s.Flush()
	res, err := s.sql.ExecContext(ctx, `DELETE FROM audit_log WHERE at < ?`, cutoff.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("pruning audit log: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("pruning audit log: %w", err)
	}
	return n, nil
}

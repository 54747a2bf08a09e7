package state

import (
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

package audit

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	_ "modernc.org/sqlite" // the protected table is read with the sqlite driver to score

	"countwall/pglex"
	"countwall/proxy/risk"
)

// Score reads each finding's true count (its true sum, for a finding of a
// sum) from the protected SQLite database (opened read-only) and says
// whether the finding holds it. The conditions are the answered statements' own, which the firewall parsed
// and validated before answering them.
func Score(ctx context.Context, truthPath string, reports []risk.Report) error {
	db, err := sql.Open("sqlite", "file:"+truthPath+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return fmt.Errorf("opening the protected database to score: %w", err)
	}
	defer db.Close()
	for ri := range reports {
		for fi := range reports[ri].Findings {
			f := &reports[ri].Findings[fi]
			if f.Table == "" || (f.Parameter != "" && f.Pattern != "idp variance test") || f.Pattern == "tracing" {
				continue
			}
			agg := "COUNT(*)"
			if f.Sum != "" {
				agg = "SUM(" + pglex.QuoteIdent(f.Sum) + ")"
			}
			q := "SELECT " + agg + " FROM " + pglex.QuoteIdent(f.Table)
			if len(f.Cell) > 0 {
				q += " WHERE " + strings.Join(f.Cell, " AND ")
			}
			var v sql.NullFloat64 // the sum of no value is NULL: 0
			if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil {
				continue // a condition SQLite spells otherwise: left unscored
			}
			n := v.Float64
			ok := math.Abs(n-f.Value) <= math.Max(f.Error, 0.5)
			if f.AtLeast {
				ok = n >= f.Value
			}
			if f.Pattern == "idp variance test" {
				b := float64(f.Threshold)
				ok = (f.Value == 1) == (n == b || n == b+1)
			}
			f.Truth, f.Correct = &n, &ok
		}
	}
	return nil
}

// EvaluateRisk assesses the statements read into h and, when truthPath
// names the protected SQLite table, scores the findings against it and
// runs the tracing test on its people.
func EvaluateRisk(ctx context.Context, h *risk.History, o risk.Options, t TraceOptions, truthPath string) ([]risk.Report, error) {
	reports := risk.AssessHistory(h, o)
	if truthPath == "" {
		return reports, nil
	}
	if err := Score(ctx, truthPath, reports); err != nil {
		return nil, err
	}
	return reports, TraceHistory(ctx, truthPath, h, reports, t)
}

// runRisk evaluates the statements read into h, writes the reports as
// JSON to jsonOut when one is named, and prints them to w.
func runRisk(ctx context.Context, w io.Writer, h *risk.History, req RiskRequest, o risk.Options) error {
	reports, err := EvaluateRisk(ctx, h, o, req.Trace, req.Truth)
	if err != nil {
		return err
	}
	if req.JSON != "" {
		b, err := json.MarshalIndent(reports, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(req.JSON, b, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", req.JSON, err)
		}
	}
	return risk.Print(w, reports)
}

package audit

import (
	"context"
	"database/sql"
	"io"
	"math"
	"runtime/debug"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // the protected table is read with the sqlite driver to score

	"countwall/pglex"
	"countwall/proxy/risk"
)

// Score reads each finding's true count (its true sum, for a finding of a
// sum) from the protected SQLite database (opened read-only) and says
// whether the finding holds it. The conditions are the answered
// statements' own, which the firewall parsed and validated before
// answering them. The findings are scored in batches, in parallel, each
// scorer on an indexed copy of the tables in memory (risk_truth.go).
func Score(ctx context.Context, truthPath string, reports []risk.Report) error {
	var jobs []scoreJob
	for ri := range reports {
		for fi := range reports[ri].Findings {
			f := &reports[ri].Findings[fi]
			if f.Table == "" || (f.Parameter != "" && f.Pattern != "idp variance test") || f.Pattern == "tracing" {
				continue
			}
			jobs = append(jobs, scoreJob{f: f})
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	tables := tableNames(jobs)
	batches := make(chan []scoreJob)
	n := scorers(len(jobs))
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, closeCopy, err := openTruthCopy(ctx, truthPath, tables)
			if err != nil {
				errs <- err
				for range batches { // the others score them
				}
				return
			}
			defer closeCopy()
			for batch := range batches {
				for _, j := range batch {
					scoreOne(ctx, conn, j.f)
				}
			}
		}()
	}
	for len(jobs) > 0 {
		k := min(scoreBatch, len(jobs))
		batches <- jobs[:k]
		jobs = jobs[k:]
	}
	close(batches)
	wg.Wait()
	close(errs)
	return <-errs // nil when every scorer opened its copy
}

// scoreJob is a finding to score.
type scoreJob struct{ f *risk.Finding }

// scoreOne reads f's true count (or sum) from conn and says whether f
// holds it; a condition SQLite spells otherwise leaves it unscored.
func scoreOne(ctx context.Context, conn *sql.Conn, f *risk.Finding) {
	agg := "COUNT(*)"
	if f.Sum != "" {
		agg = "SUM(" + pglex.QuoteIdent(f.Sum) + ")"
	}
	q := "SELECT " + agg + " FROM " + pglex.QuoteIdent(f.Table)
	if len(f.Cell) > 0 {
		q += " WHERE " + strings.Join(f.Cell, " AND ")
	}
	var v sql.NullFloat64 // the sum of no value is NULL: 0
	if err := conn.QueryRowContext(ctx, q).Scan(&v); err != nil {
		return
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

// EvaluateRisk assesses the statements read into h and, when truthPath
// names the protected SQLite table, scores the findings against it and
// runs the tracing test on its people.
func EvaluateRisk(ctx context.Context, h *risk.History, o risk.Options, t TraceOptions, truthPath string) ([]risk.Report, error) {
	reports := risk.AssessHistory(h, o)
	if truthPath == "" {
		return reports, nil
	}
	// The solvers' memory, let go, is given back before the scorers' copies
	// of the tables are made (outside the collector's limit): held, it
	// would stand beside them.
	debug.FreeOSMemory()
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
		if err := writeReportsJSON(req.JSON, reports); err != nil {
			return err
		}
	}
	return risk.Print(w, reports)
}

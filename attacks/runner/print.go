package runner

import (
	"fmt"
	"io"
	"strings"

	"countwall/attacks"
	"countwall/attacks/report"
)

// Print shows what an attack recovered, what it cost and, given the truth,
// its score; a histogram attack's values follow, one line each.
func Print(w io.Writer, r *attacks.Result) {
	printAttack(w, r)
	printHistogram(w, r)
}

func printAttack(w io.Writer, r *attacks.Result) {
	fmt.Fprintf(w, "attack     %s\ntarget     %s\nestimate   %.2f (recovered %d)\nqueries    %d sent, %d refused\n",
		r.Attack, r.Target, r.Estimate, r.Recovered, r.Queries, r.Refused)
	fmt.Fprintf(w, "charged    %s\ntime       %.2fs\n", report.ChargedLine(r), r.Seconds)
	if v, ok := r.Details["queries_per_person"].(float64); ok {
		fmt.Fprintf(w, "per person %.1f queries\n", v)
	}
	if sample, ok := r.Details["sample"].([]string); ok && len(sample) > 0 {
		fmt.Fprintf(w, "rows       %s, ... (every row with --json)\n", strings.Join(sample, "; "))
	}
	if r.Undecided {
		fmt.Fprintf(w, "verdict    none\n")
	}
	if r.Truth != nil {
		verdict := "not recovered"
		if *r.Exact {
			verdict = "recovered exactly"
		}
		fmt.Fprintf(w, "truth      %d: %s\n", *r.Truth, verdict)
	}
	if r.Note != "" {
		fmt.Fprintf(w, "note       %s\n", r.Note)
	}
}

// printHistogram shows what a histogram attack recovered, and its score.
func printHistogram(w io.Writer, r *attacks.Result) {
	if len(r.Histogram) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%-10s %10s %10s %10s\n", "value", "answer", "recovered", "truth")
	for _, b := range r.Histogram {
		truth, mark := "", ""
		if b.Truth != nil {
			truth = fmt.Sprint(*b.Truth)
			if *b.Truth != b.Estimate {
				mark = "  wrong"
			}
		}
		fmt.Fprintf(w, "%-10s %10d %10d %10s%s\n", b.Value, b.Answer, b.Estimate, truth, mark)
	}
	if r.CellsExact != nil {
		fmt.Fprintf(w, "\n%d of %d values recovered exactly (%.1f%%)\n", *r.CellsExact, r.CellsTotal, 100*float64(*r.CellsExact)/float64(r.CellsTotal))
	}
}

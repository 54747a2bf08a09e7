package runner

import (
	"fmt"
	"io"
	"strconv"
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
	fmt.Fprintf(w, "attack     %s\nresult     %s\ntarget     %s\n", r.Attack, report.Headline(r), r.Target)
	if !r.Undecided {
		fmt.Fprintf(w, "estimate   %s (recovered %d)\n", strconv.FormatFloat(r.Estimate, 'f', 2, 64), r.Recovered)
	}
	fmt.Fprintf(w, "queries    %d sent, %d refused\ncharged    %s\ntime       %.2fs\n", r.Queries, r.Refused, report.ChargedLine(r), r.Seconds)
	if v, ok := r.Details["queries_per_person"].(float64); ok {
		fmt.Fprintf(w, "per person %.1f queries\n", v)
	}
	if sample, ok := r.Details["sample"].([]string); ok && len(sample) > 0 {
		fmt.Fprintf(w, "rows       %s, ... (every row with --json)\n", strings.Join(sample, "; "))
	}
	// A run scored cell by cell has its figure in the headline; its
	// estimate is a total, beside the true one here.
	if r.Truth != nil && r.CellsTotal > 0 && !r.Undecided {
		fmt.Fprintf(w, "total      %d, the truth is %d\n", r.Recovered, *r.Truth)
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
		est := strconv.FormatInt(b.Estimate, 10)
		if b.Estimate < 0 {
			est = "none" // the attack stopped before this value
		}
		fmt.Fprintf(w, "%-10s %10d %10s %10s%s\n", b.Value, b.Answer, est, truth, mark)
	}
	if r.CellsExact != nil {
		fmt.Fprintf(w, "\n%d of %d values recovered exactly (%.1f%%)\n", *r.CellsExact, r.CellsTotal, 100*float64(*r.CellsExact)/float64(r.CellsTotal))
	}
}

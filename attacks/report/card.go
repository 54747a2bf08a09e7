// Package report renders attack results as a report card: one row per attack
// run against a mechanism, saying what was recovered and what it cost.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"

	"countwall/attacks"
)

// Row is one attack run against one mechanism. Err is set when the run
// failed outright (the firewall refused its first query, say); a run the
// firewall stopped part way is a Result with refusals.
type Row struct {
	Attack    string          `json:"attack"`
	Mechanism string          `json:"mechanism"`
	Result    *attacks.Result `json:"result,omitempty"`
	Err       string          `json:"error,omitempty"`
}

// Recovered says in a few words what a run recovered, scored against the
// truth where the result carries it.
func Recovered(r *attacks.Result) string {
	switch {
	case r == nil:
		return "-"
	case r.CellsTotal > 0 && r.CellsExact != nil:
		return fmt.Sprintf("%d of %d exact (%.1f%%)", *r.CellsExact, r.CellsTotal, 100*float64(*r.CellsExact)/float64(r.CellsTotal))
	case r.Undecided:
		// The targeted attacks recover nothing from a firewall whose
		// answers they cannot read with certainty.
		if r.Truth != nil {
			return fmt.Sprintf("no verdict, truth %d", *r.Truth)
		}
		return "no verdict"
	case r.Exact != nil && r.Truth != nil:
		if *r.Exact {
			return fmt.Sprintf("%d, exact%s", r.Recovered, withheldMark(r))
		}
		return fmt.Sprintf("%d, truth %d%s", r.Recovered, *r.Truth, withheldMark(r))
	}
	return fmt.Sprintf("%d (unscored)", r.Recovered)
}

// withheldMark says that the firewall withheld the very cell the run
// recovered (sum-differencing asks it first), which the bare figure hides.
func withheldMark(r *attacks.Result) string {
	if w, _ := r.Details["cell_withheld"].(bool); w {
		return " (withheld)"
	}
	return ""
}

// Headline is a run's scored figure in words, the first line of its text
// result: "146 of 147 bits recovered exactly (99.3%)", "no verdict",
// "recovered 41 exactly".
func Headline(r *attacks.Result) string {
	switch {
	case r == nil:
		return "nothing"
	case r.CellsTotal > 0 && r.CellsExact != nil:
		return fmt.Sprintf("%s of %s %s (%.1f%%)", humanize.Comma(int64(*r.CellsExact)), humanize.Comma(int64(r.CellsTotal)),
			cmp.Or(r.Unit, "cells exact"), 100*float64(*r.CellsExact)/float64(r.CellsTotal))
	case r.Undecided && r.Truth != nil:
		return fmt.Sprintf("no verdict (the truth is %d)", *r.Truth)
	case r.Undecided:
		return "no verdict"
	}
	value := strconv.FormatInt(r.Recovered, 10)
	if v, ok := r.Details["value"].(string); ok && v != "" {
		value = v // a category, which Recovered holds as its index
	}
	if v, ok := r.Details["verdict"].(string); ok && v != "" {
		// membership and uniqueness: the verdict in words, 1 or 0 beside it
		value = fmt.Sprintf("%s (%d)", v, r.Recovered)
	}
	switch {
	case r.Exact != nil && r.Truth != nil && *r.Exact:
		return "recovered " + value + " exactly"
	case r.Exact != nil && r.Truth != nil:
		return fmt.Sprintf("recovered %s, the truth is %d", value, *r.Truth)
	}
	return "recovered " + value + " (not scored)"
}

// Charged lists the epsilon this run cost, by accounting kind (the
// difference of SHOW budget before and after it). A result saved before runs
// recorded their own cost has only the analyst's total, which it shows: the
// demo gives every attack an analyst of its own, so there the two agree.
func Charged(r *attacks.Result) string {
	if r == nil {
		return "nothing"
	}
	if r.Charged != nil {
		return epsilonByKind(r.Charged, "")
	}
	return epsilonByKind(r.Spent, "")
}

// Total lists the analyst's running total after the run, by accounting kind
// (SHOW budget): this run's cost and everything the analyst spent before.
func Total(r *attacks.Result) string {
	if r == nil {
		return "nothing"
	}
	return epsilonByKind(r.Spent, "")
}

// ChargedLine says what a run cost and, beside it, the analyst's total, for
// a single run's report: "dp epsilon 0.2 (analyst's total dp epsilon 1.2)".
func ChargedLine(r *attacks.Result) string {
	if r == nil || (r.Charged == nil && r.Spent == nil) {
		return "nothing"
	}
	run := epsilonByKind(r.Charged, " epsilon")
	if r.Charged == nil {
		run = "unknown" // SHOW budget failed before the run
	}
	if r.Spent == nil {
		return run
	}
	return fmt.Sprintf("%s (analyst's total %s)", run, epsilonByKind(r.Spent, " epsilon"))
}

// epsilonByKind renders the kinds with a positive amount, in name order
// ("bdp 2e-10, idp 1.74e-07"), each name followed by unit; "nothing" when
// none is positive.
func epsilonByKind(m map[string]float64, unit string) string {
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		// Differences of floating-point totals leave dust (1.2 - 1.0 is
		// 0.19999999999999996): three significant digits hide it.
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s%s %.3g", k, unit, m[k]))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// Print writes the card: a row per run, then the notes of runs that were
// stopped or failed.
func Print(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "attack\tmechanism\trecovered\tqueries\trefused\tcharged\tseconds")
	var notes []string
	for _, row := range rows {
		r := row.Result
		if r == nil {
			fmt.Fprintf(tw, "%s\t%s\tfailed\t-\t-\t-\t-\n", row.Attack, row.Mechanism)
			notes = append(notes, fmt.Sprintf("%s vs %s: %s", row.Attack, row.Mechanism, row.Err))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%.1f\n", row.Attack, row.Mechanism, Recovered(r), r.Queries, r.Refused, Charged(r), r.Seconds)
		if r.Refused > 0 && r.Note != "" {
			notes = append(notes, fmt.Sprintf("%s vs %s: %s", row.Attack, row.Mechanism, r.Note))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
	return nil
}

// Read loads rows from files written by Write, or single attack results
// as `countwall attack --json` writes them, in the order of the files.
func Read(paths ...string) ([]Row, error) {
	var rows []Row
	for _, path := range paths {
		r, err := readOne(path)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

func readOne(path string) ([]Row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []Row
	if err := json.Unmarshal(b, &rows); err == nil {
		return rows, nil
	}
	var one attacks.Result
	if err := json.Unmarshal(b, &one); err != nil || one.Attack == "" {
		return nil, fmt.Errorf("%s holds neither a report card nor an attack result", path)
	}
	return []Row{{Attack: one.Attack, Mechanism: one.Mechanism, Result: &one}}, nil
}

// Write saves rows as JSON, for Read and for other tools.
func Write(path string, rows []Row) error {
	b, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

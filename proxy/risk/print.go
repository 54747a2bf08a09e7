package risk

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
)

// shown is how many findings per analyst Print lists in full.
const shown = 12

// Print writes the reports for the owner: per analyst the answered
// statements read, what they determine (individuals first), and the
// evidence (audit row ids) of each finding.
func Print(w io.Writer, reports []Report) error {
	if len(reports) == 0 {
		_, err := fmt.Fprintln(w, "audit risk: the released answers determine no individual and no cell")
		return err
	}
	for _, r := range reports {
		fmt.Fprintf(w, "analyst %s: %d answered statements; %d findings, %d about one person (%s)\n",
			r.Analyst, r.Answered, len(r.Findings), r.Individuals(), PatternCounts(r.Findings))
		if r.Skipped != "" {
			fmt.Fprintf(w, "  %s\n", r.Skipped)
		}
		if r.Unread > 0 {
			fmt.Fprintf(w, "  %d answered statements have no structured record and were not assessed\n", r.Unread)
		}
		if scored, correct := Scored(r); scored > 0 {
			fmt.Fprintf(w, "  scored against the protected table: %d of %d findings hold\n", correct, scored)
		}
		for i, f := range ordered(r.Findings) {
			if i == shown {
				fmt.Fprintf(w, "  ... and %d more (every finding with --json)\n", len(r.Findings)-shown)
				break
			}
			who := ""
			if f.Individual {
				who = " [one person]"
			}
			fmt.Fprintf(w, "  %-20s %s%s%s; evidence %s\n", f.Pattern, f.What(), who, truthNote(f), evidence(f))
		}
	}
	return nil
}

// ordered puts the summaries (a flag with a note: how many people the
// tracing test traced) first, then the findings about one person, keeping
// their order.
func ordered(fs []Finding) []Finding {
	out := make([]Finding, 0, len(fs))
	summary := func(f Finding) bool { return !f.Individual && f.Note != "" }
	for _, f := range fs {
		if summary(f) {
			out = append(out, f)
		}
	}
	for _, f := range fs {
		if f.Individual {
			out = append(out, f)
		}
	}
	for _, f := range fs {
		if !f.Individual && !summary(f) {
			out = append(out, f)
		}
	}
	return out
}

// PatternCounts is "differencing 1, threshold search 12": each pattern
// of the findings, in the order found, with how many.
func PatternCounts(fs []Finding) string {
	var order []string
	n := map[string]int{}
	for _, f := range fs {
		if n[f.Pattern] == 0 {
			order = append(order, f.Pattern)
		}
		n[f.Pattern]++
	}
	parts := make([]string, len(order))
	for i, p := range order {
		parts[i] = fmt.Sprintf("%s %d", p, n[p])
	}
	return strings.Join(parts, ", ")
}

func evidence(f Finding) string {
	s := idList(f.Evidence)
	if len(f.Published) > 0 {
		s += " and the published release's " + idList(f.Published)
	}
	return s
}

func idList(list []int64) string {
	var ids []string
	for i, id := range list {
		if i == 4 {
			ids = append(ids, fmt.Sprintf("... (%d statements)", len(list)))
			break
		}
		ids = append(ids, fmt.Sprintf("#%d", id))
	}
	return strings.Join(ids, " ")
}

func truthNote(f Finding) string {
	if f.Truth == nil {
		return ""
	}
	if *f.Correct {
		return fmt.Sprintf(" (true %g: holds)", *f.Truth)
	}
	return fmt.Sprintf(" (true %g: does not hold)", *f.Truth)
}

// Scored says how many findings were scored and how many hold.
func Scored(r Report) (scored, correct int) {
	for _, f := range r.Findings {
		if f.Correct != nil {
			scored++
			if *f.Correct {
				correct++
			}
		}
	}
	return scored, correct
}

// Score reads each finding's true count from the protected SQLite
// database (opened read-only) and says whether the finding holds it. The
// conditions are the answered statements' own, which the firewall parsed
// and validated before answering them.
func Score(ctx context.Context, truthPath string, reports []Report) error {
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
			q := "SELECT COUNT(*) FROM " + pglex.QuoteIdent(f.Table)
			if len(f.Cell) > 0 {
				q += " WHERE " + strings.Join(f.Cell, " AND ")
			}
			var n float64
			if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
				continue // a condition SQLite spells otherwise: left unscored
			}
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

// Evaluate assesses the statements read into h and, when truthPath names
// the protected SQLite table, scores the findings against it and runs the
// tracing test on its people.
func Evaluate(ctx context.Context, h *History, o Options, truthPath string) ([]Report, error) {
	reports := AssessHistory(h, o)
	if truthPath == "" {
		return reports, nil
	}
	if err := Score(ctx, truthPath, reports); err != nil {
		return nil, err
	}
	return reports, TraceHistory(ctx, truthPath, h, reports, o)
}

// Run assesses the statements read into h, scores the findings against the protected SQLite table at
// truthPath when one is named, writes them as JSON to jsonOut when one is
// named, and prints them to w: `countwall audit risk`.
func Run(ctx context.Context, w io.Writer, h *History, o Options, truthPath, jsonOut string) error {
	reports, err := Evaluate(ctx, h, o, truthPath)
	if err != nil {
		return err
	}
	if jsonOut != "" {
		b, err := json.MarshalIndent(reports, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(jsonOut, b, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", jsonOut, err)
		}
	}
	return Print(w, reports)
}

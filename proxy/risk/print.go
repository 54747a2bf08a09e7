package risk

import (
	"fmt"
	"io"
	"strings"
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
		fmt.Fprintf(w, "analyst %s: %d answered statements; %s, %d about one person (%s)\n",
			r.Analyst, r.Answered, Findings(len(r.Findings)), r.Individuals(), PatternCounts(r.Findings))
		if r.Skipped != "" {
			fmt.Fprintf(w, "  %s\n", r.Skipped)
		}
		if r.Unread > 0 {
			fmt.Fprintf(w, "  %d answered statements have no structured record and were not assessed\n", r.Unread)
		}
		if scored, correct := Scored(r); scored > 0 {
			fmt.Fprintf(w, "  scored against the protected table: %d of %s hold\n", correct, Findings(scored))
		}
		for i, f := range ordered(r.Findings, shown+1) {
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
// their order: the first n of them (a whole reconstruction's findings are
// not copied to print a dozen).
func ordered(fs []Finding, n int) []Finding {
	var out []Finding
	summary := func(f Finding) bool { return !f.Individual && f.Note != "" }
	for _, keep := range []func(Finding) bool{
		summary,
		func(f Finding) bool { return f.Individual },
		func(f Finding) bool { return !f.Individual && !summary(f) },
	} {
		for _, f := range fs {
			if len(out) == n {
				return out
			}
			if keep(f) {
				out = append(out, f)
			}
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

// Findings is n findings as a sentence says it: "1 finding", "2 findings".
func Findings(n int) string {
	if n == 1 {
		return "1 finding"
	}
	return fmt.Sprintf("%d findings", n)
}

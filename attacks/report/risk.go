package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"countwall/proxy/risk"
)

// RiskFile is the name of the audit risk results a demo run writes beside
// its audit.json; WriteHTMLCard shows them when the file is there.
const RiskFile = "risk.json"

// RiskRun is `countwall audit risk` on one firewall's state after the
// attacks (or the demo's ordinary queries) ran through it.
type RiskRun struct {
	Setting string        `json:"setting"`
	Reports []risk.Report `json:"reports"`
	// Analysts are every analyst whose answers were read, so that the card
	// can say of each one found nothing.
	Analysts []string `json:"analysts"`
	// Published names the release made public before (another firewall's
	// answers) that was combined with each analyst's, if any.
	Published string `json:"published,omitempty"`
}

// WriteRisk writes runs as JSON.
func WriteRisk(path string, runs []RiskRun) error {
	b, err := json.MarshalIndent(runs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// readRisk reads the runs written beside an audit file, if any.
func readRisk(auditPath string) ([]RiskRun, error) {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(auditPath), RiskFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var runs []RiskRun
	if err := json.Unmarshal(b, &runs); err != nil {
		return nil, fmt.Errorf("reading %s: %w", RiskFile, err)
	}
	return runs, nil
}

// riskLine is one analyst's outcome in a run, for the text card and the
// page: what the answers determine, or that they determine nothing.
func riskLine(run RiskRun, analyst string) (summary string, found *risk.Report) {
	for i, r := range run.Reports {
		if r.Analyst != analyst {
			continue
		}
		scored, correct := risk.Scored(r)
		s := fmt.Sprintf("%s, %d about one person", risk.Findings(len(r.Findings)), r.Individuals())
		if scored > 0 {
			s += fmt.Sprintf("; %d of %d hold on the protected table", correct, scored)
		}
		return s, &run.Reports[i]
	}
	return "nothing determined", nil
}

// PrintRisk writes the card's audit risk section: per firewall and
// analyst, what `countwall audit risk` found on the state alone.
func PrintRisk(w io.Writer, runs []RiskRun) error {
	if len(runs) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "countwall audit risk on each firewall's state alone (what the answers each analyst was sent determine):")
	for _, run := range runs {
		if run.Published != "" {
			fmt.Fprintf(w, "  %-28s (combined with the published release: %s)\n", run.Setting, run.Published)
		}
		for _, a := range run.Analysts {
			summary, found := riskLine(run, a)
			fmt.Fprintf(w, "  %-28s %-22s %s\n", run.Setting, a, summary)
			if found != nil && len(found.Findings) > 0 {
				f := first(found.Findings)
				fmt.Fprintf(w, "  %-28s %-22s   e.g. %s: %s\n", "", "", f.Pattern, shorten(f.What(), 110))
			}
		}
	}
	return nil
}

// first is the finding to show: one about a person if there is one.
func first(fs []risk.Finding) risk.Finding {
	for _, f := range fs {
		if f.Individual {
			return f
		}
	}
	return fs[0]
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// writeRiskHTML is the page's audit risk section.
func writeRiskHTML(b *strings.Builder, runs []RiskRun) {
	if len(runs) == 0 {
		return
	}
	b.WriteString(`<h2>What the audit says each analyst learned</h2>
<p class="note">countwall audit risk, run after the attacks on each firewall's state database alone: the shipped attacks' solvers take the answers the audit recorded instead of asking. A finding is a count the released answers determine exactly or within the error shown; "about one person" means it singles out one row or pins one unit's value. Scored against the protected table.</p>
<table><tr><th>firewall</th><th>analyst</th><th>what the released answers determine</th><th>for example</th></tr>
`)
	for _, run := range runs {
		if run.Published != "" {
			fmt.Fprintf(b, "<tr><td>%s</td><td colspan=\"3\">combined with the published release: %s</td></tr>\n", esc(run.Setting), esc(run.Published))
		}
		for _, a := range run.Analysts {
			summary, found := riskLine(run, a)
			example := ""
			if found != nil && len(found.Findings) > 0 {
				f := first(found.Findings)
				example = f.Pattern + ": " + shorten(f.What(), 160)
			}
			fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", esc(run.Setting), esc(a), esc(summary), esc(example))
		}
	}
	b.WriteString("</table>\n")
}

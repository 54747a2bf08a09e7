package report

import (
	"fmt"
	"html"
	"io"
	"os"
	"strings"
	"time"

	"countwall/attacks"
	"countwall/attacks/audit"
)

// Page is what the HTML report card shows.
type Page struct {
	Rows  []Row
	Audit *audit.Report // nil: no audited column or epsilon plot
	Risk  []RiskRun     // audit risk on the firewalls' states (risk.go)
	// Generated is stamped on the page.
	Generated time.Time
}

// PaperTable is one of the papers' tables beside our figures for it.
type PaperTable struct {
	Title   string
	Source  string
	Command string // what measured ours
	Columns []string
	Rows    []PaperRow
}

// PaperRow is a row of ours and, below it, the paper's.
type PaperRow struct {
	Label        string
	Ours, Papers []string
}

// PaperTables are the papers' tables we reproduce, with our figures as
// measured by the commands named (quoted in the README with their runs).
var PaperTables = []PaperTable{
	{
		Title:   "Asghar and Kaafar, Table 3: noise remover on the Adult age column",
		Source:  "mean values of 111 recovered exactly over 100 runs; cellkey uniform noise on -D..D, counts <= 4 published as 0",
		Command: "countwall attack noise-remover-table3 --adult ../shared/data/adult.csv --runs 100 --seed 2026",
		Columns: []string{"D", "k=50", "k=100", "k=200", "k=250"},
		Rows: []PaperRow{
			{"±2", []string{"103.0", "109.0", "110.7", "110.8"}, []string{"103.2", "110.1", "111.0", "111.0"}},
			{"±3", []string{"92.5", "103.6", "109.2", "109.3"}, []string{"89.8", "103.9", "110.0", "110.8"}},
			{"±5", []string{"75.2", "88.4", "100.2", "103.1"}, []string{"70.2", "88.0", "98.2", "103.6"}},
		},
	},
	{
		Title:   "Protivash et al., Table 1: the IDP variance test's accuracy",
		Source:  "telling local sensitivity 0 from 1 under idp with plus_one from m answers",
		Command: "go test ./attacks -run IDPVarianceTable1 -v",
		Columns: []string{"", "m=10", "m=100", "m=1000"},
		Rows: []PaperRow{
			{"accuracy", []string{"79.9%", "98.75%", "100%"}, []string{"80.3%", "98.8%", "100%"}},
		},
	},
}

// WriteHTMLFile writes the page to path.
func WriteHTMLFile(path string, p Page) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteHTML(f, p); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteHTML writes the report card as one self-contained HTML page: no
// script, no external resource, the plots inline SVG.
func WriteHTML(w io.Writer, p Page) error {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>countwall report card</title>
<style>
body{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f2f2f2}
td.num{text-align:right}
tr.paper td{color:#666;font-style:italic}
.plots{display:flex;flex-wrap:wrap;gap:12px}
.note{color:#555;font-size:13px}
</style></head><body>
<h1>countwall report card</h1>
`)
	fmt.Fprintf(&b, `<p class="note">Generated %s. Each attack ran over the PostgreSQL wire protocol against the mechanisms named, scored against the protected table.</p>`+"\n",
		html.EscapeString(p.Generated.UTC().Format("2006-01-02 15:04 MST")))

	audited := auditedByMechanism(p.Audit)
	b.WriteString("<h2>The card</h2>\n<table><tr><th>attack</th><th>mechanism</th><th>recovered</th><th>queries</th><th>refused</th><th>charged</th><th>audited loss of the mechanism</th></tr>\n")
	for _, row := range p.Rows {
		r := row.Result
		loss := "-"
		if m, ok := audited[mechanismOf(row)]; ok {
			loss = audit.Audited(m)
			if m.ClaimedEpsilon > 0 {
				loss += " (claimed " + audit.Claimed(m.ClaimedEpsilon) + " for that test)"
			}
		}
		if r == nil {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>failed: %s</td><td></td><td></td><td></td><td>%s</td></tr>\n", esc(row.Attack), esc(row.Mechanism), esc(row.Err), esc(loss))
			continue
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td class=num>%d</td><td class=num>%d</td><td>%s</td><td>%s</td></tr>\n",
			esc(row.Attack), esc(row.Mechanism), esc(Recovered(r)), r.Queries, r.Refused, esc(Charged(r)), esc(loss))
	}
	b.WriteString("</table>\n")

	b.WriteString(`<h2>Each attack against the queries it sent</h2>
<p class="note">The line is the share of the attack's steps done after so many queries (a single-step attack jumps from 0 to 100%); the dot at its end is what it recovered exactly (its success). A line that stops short was refused by the firewall.</p>
<div class="plots">
`)
	for _, name := range attackOrder(p.Rows) {
		var lines []series
		for _, row := range p.Rows {
			if row.Attack != name || row.Result == nil {
				continue
			}
			lines = append(lines, progressSeries(row.Mechanism, colour(len(lines)), row.Result))
		}
		b.WriteString(progressPlot(name, lines))
		b.WriteString("\n")
	}
	b.WriteString("</div>\n")

	if p.Audit != nil {
		b.WriteString("<h2>What each mechanism claims, and what an attacker can demonstrate</h2>\n")
		fmt.Fprintf(&b, `<p class="note">countwall audit: the best of %d distinguishing tests on two tables differing in one person, %d trials per table and test, lower bounds at %g%% joint confidence (Clopper-Pearson, Bonferroni), %.0f s. A test without errors can show at most %.2f with these trials.</p>`+"\n",
			len(audit.Default(p.Audit.CellRows)), p.Audit.Trials, 100*p.Audit.Confidence, p.Audit.Seconds, audit.Ceiling(p.Audit.Trials, p.Audit.Confidence, len(audit.Default(p.Audit.CellRows))))
		var pts []epsilonPoint
		b.WriteString("<table><tr><th>mechanism</th><th>claimed per query</th><th>best test</th><th>queries</th><th>claimed for the test</th><th>errors (fp/fn)</th><th>audited epsilon</th></tr>\n")
		for _, res := range p.Audit.Results {
			m := res.Best()
			pts = append(pts, epsilonPoint{mechanism: res.Mechanism, claimed: res.ClaimedPerQuery(), testClaim: m.ClaimedEpsilon, audited: m.EpsilonLB})
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td class=num>%d</td><td>%s</td><td>%d/%d</td><td>%s</td></tr>\n",
				esc(res.Mechanism), audit.Claimed(res.ClaimedPerQuery()), esc(m.Distinguisher), m.Queries, audit.Claimed(m.ClaimedEpsilon), m.FalsePos, m.FalseNeg, esc(audit.Audited(m)))
		}
		b.WriteString("</table>\n<div class=\"plots\">")
		b.WriteString(epsilonPlot(pts))
		b.WriteString("</div>\n")
	}

	writeRiskHTML(&b, p.Risk)

	b.WriteString("<h2>The papers' tables beside ours</h2>\n")
	for _, t := range PaperTables {
		fmt.Fprintf(&b, "<h3>%s</h3>\n<p class=\"note\">%s. Ours: <code>%s</code>; the paper's figures in grey italics.</p>\n<table><tr>", esc(t.Title), esc(t.Source), esc(t.Command))
		for _, c := range t.Columns {
			fmt.Fprintf(&b, "<th>%s</th>", esc(c))
		}
		b.WriteString("</tr>\n")
		for _, r := range t.Rows {
			fmt.Fprintf(&b, "<tr><td>%s (ours)</td>", esc(r.Label))
			for _, v := range r.Ours {
				fmt.Fprintf(&b, "<td class=num>%s</td>", esc(v))
			}
			fmt.Fprintf(&b, "</tr>\n<tr class=\"paper\"><td>%s (paper)</td>", esc(r.Label))
			for _, v := range r.Papers {
				fmt.Fprintf(&b, "<td class=num>%s</td>", esc(v))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n")
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string { return html.EscapeString(s) }

// mechanismOf is the mechanism a row ran against, as the audit names it:
// what the firewall said (SHOW mechanism), else the label's first word.
func mechanismOf(row Row) string {
	if row.Result != nil && row.Result.Mechanism != "" {
		return row.Result.Mechanism
	}
	name, _, _ := strings.Cut(row.Mechanism, " ")
	return name
}

func auditedByMechanism(r *audit.Report) map[string]audit.Measurement {
	out := map[string]audit.Measurement{}
	if r == nil {
		return out
	}
	for _, res := range r.Results {
		out[res.Mechanism] = res.Best()
	}
	return out
}

// attackOrder lists the attacks in the order the card first shows them.
func attackOrder(rows []Row) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.Attack] {
			seen[r.Attack] = true
			names = append(names, r.Attack)
		}
	}
	return names
}

// progressSeries is a run's progress line: from nothing at 0 queries through
// the points the attack recorded to its last query, and its success.
func progressSeries(name, colour string, r *attacks.Result) series {
	s := series{name: name, colour: colour, points: []xy{{0, 0}}}
	for _, p := range r.Progress {
		if p.Total > 0 {
			s.points = append(s.points, xy{float64(p.Queries), float64(p.Done) / float64(p.Total)})
		}
	}
	done := 1.0
	if len(r.Progress) > 0 {
		last := r.Progress[len(r.Progress)-1]
		done = float64(last.Done) / float64(max(last.Total, 1))
	} else if r.Undecided || r.Refused > 0 {
		done = 0
	}
	if last := s.points[len(s.points)-1]; last.x != float64(r.Queries) {
		s.points = append(s.points, xy{float64(r.Queries), done})
	}
	if r.Success != nil {
		s.final = &xy{float64(r.Queries), *r.Success}
	}
	return s
}

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
// measured by the commands named (quoted in docs/attacks.md with their runs).
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
	fmt.Fprintf(&b, `<p class="note">Generated %s. %s</p>`+"\n",
		html.EscapeString(p.Generated.UTC().Format("2006-01-02 15:04 MST")), esc(transportSummary(p.Rows)))
	writeCardTable(&b, p)
	writeProgressPlots(&b, p.Rows)
	writeAuditSection(&b, p.Audit)
	writeRiskHTML(&b, p.Risk)
	writePaperTables(&b)
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
// the points the attack recorded to its last query, ending at its success
// when it has one. Steps done and cells recovered exactly differ (an
// attack can finish every step and still be wrong), so the line's last
// point is the success, the dot drawn on it: a drop there is the
// difference between finishing and being right.
func progressSeries(name, colour string, r *attacks.Result) series {
	s := series{name: name, colour: colour, points: []xy{{0, 0}}}
	for _, p := range r.Progress {
		if p.Total > 0 {
			s.points = append(s.points, xy{float64(p.Queries), float64(p.Done) / float64(p.Total)})
		}
	}
	end := 1.0
	switch {
	case r.Success != nil:
		end = *r.Success
	case len(r.Progress) > 0:
		last := r.Progress[len(r.Progress)-1]
		end = float64(last.Done) / float64(max(last.Total, 1))
	case r.Undecided || r.Refused > 0:
		end = 0
	}
	if last := s.points[len(s.points)-1]; last != (xy{float64(r.Queries), end}) {
		s.points = append(s.points, xy{float64(r.Queries), end})
	}
	if r.Success != nil {
		s.final = &xy{float64(r.Queries), *r.Success}
	}
	return s
}

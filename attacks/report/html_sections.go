package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"countwall/attacks"
	"countwall/attacks/audit"
)

// transportSummary says how the card's runs reached the firewall, counted
// from what each run recorded: the card claims nothing the runs did not.
func transportSummary(rows []Row) string {
	counts := map[string]int{}
	for _, row := range rows {
		t := "not recorded"
		if row.Result != nil && row.Result.Reach != nil {
			t = row.Result.Reach.Transport
		}
		counts[t]++
	}
	var parts []string
	for _, t := range []string{attacks.TransportWire, attacks.TransportInProcess, "not recorded"} {
		if n := counts[t]; n > 0 {
			what := map[string]string{attacks.TransportWire: "over the PostgreSQL wire protocol", attacks.TransportInProcess: "in process (no wire)",
				"not recorded": "with no record of how they reached the firewall"}[t]
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	if len(parts) == 0 {
		return "No runs."
	}
	return "Runs: " + strings.Join(parts, ", ") + `. The column "ran" says how each one reached the firewall, with which config and table.`
}

// reachCell is the card's "ran" cell of a run: transport, server, config
// (its file name, the whole path on hover) and table.
func reachCell(row Row) string {
	if row.Result == nil || row.Result.Reach == nil {
		return "not recorded"
	}
	r := row.Result.Reach
	if r.Config == "" {
		return esc(r.String())
	}
	return fmt.Sprintf(`<span title="%s">%s</span>`, esc(r.Config), esc(r.String()))
}

// auditJoin is the audited loss to show beside a run. An audit of the
// run's own config and table (countwall audit --config) gives the best
// test of the run's mechanism as deployed. An audit on the synthetic table
// (the demo's, or countwall audit without --config) measured the mechanism
// itself at the audit's parameters, not the deployment the run attacked:
// its figure is shown marked as such, as the mechanism's own loss. An
// audit of another deployment says nothing about the run.
func auditJoin(rep *audit.Report, row Row) string {
	if rep == nil || row.Result == nil {
		return "-"
	}
	synthetic := rep.ConfigPath == ""
	if !synthetic {
		reach := row.Result.Reach
		if reach == nil || filepath.Clean(reach.Config) != filepath.Clean(rep.ConfigPath) || !strings.EqualFold(reach.Table, rep.Table) {
			return "-"
		}
	}
	// An audit of a deployment names each result by mechanism and kind of
	// neighbour ("idp (removed)"): the run's mechanism shows the best of
	// them.
	var best *audit.Measurement
	var kind string
	for _, res := range rep.Results {
		name, neighbour, _ := strings.Cut(res.Mechanism, " ")
		if name != mechanismOf(row) {
			continue
		}
		if m := res.Best(); best == nil || m.EpsilonLB > best.EpsilonLB {
			best, kind = &m, strings.Trim(neighbour, "()")
		}
	}
	if best == nil {
		return "-"
	}
	loss := audit.Audited(*best)
	var about []string
	if synthetic {
		about = append(about, "synthetic neighbours")
	}
	if best.ClaimedEpsilon > 0 {
		about = append(about, "claimed "+audit.Claimed(best.ClaimedEpsilon)+" for that test")
	}
	if kind != "" {
		about = append(about, "neighbour "+kind)
	}
	if len(about) > 0 {
		loss += " (" + strings.Join(about, "; ") + ")"
	}
	return loss
}

// lossHeading heads the card's audited loss column, saying what the audit
// measured.
func lossHeading(rep *audit.Report) string {
	switch {
	case rep == nil:
		return "audited loss (no audit)"
	case rep.ConfigPath == "":
		return "audited loss of the mechanism (on synthetic neighbours, not this deployment)"
	}
	return "audited loss (same config and table)"
}

// writeCardTable writes the card: a row per run.
func writeCardTable(b *strings.Builder, p Page) {
	b.WriteString("<h2>The card</h2>\n<table><tr><th>attack</th><th>mechanism</th><th>ran</th><th>recovered</th><th>queries</th><th>refused</th><th>charged</th><th>" + esc(lossHeading(p.Audit)) + "</th></tr>\n")
	for _, row := range p.Rows {
		r := row.Result
		loss := auditJoin(p.Audit, row)
		if r == nil {
			fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>failed: %s</td><td></td><td></td><td></td><td>%s</td></tr>\n",
				esc(row.Attack), esc(row.Mechanism), reachCell(row), esc(row.Err), esc(loss))
			continue
		}
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=num>%d</td><td class=num>%d</td><td>%s</td><td>%s</td></tr>\n",
			esc(row.Attack), esc(row.Mechanism), reachCell(row), esc(Recovered(r)), r.Queries, r.Refused, esc(Charged(r)), esc(loss))
	}
	b.WriteString("</table>\n")
}

// writeProgressPlots writes one plot per attack, a line per run.
func writeProgressPlots(b *strings.Builder, rows []Row) {
	b.WriteString(`<h2>Each attack against the queries it sent</h2>
<p class="note">The line is the share of the attack's steps done after so many queries (an attack that records no steps jumps from 0 straight to its result); the line ends on the dot, what it recovered exactly (its success): a drop at the end is an attack that finished its steps but was not exact. A line that stops short was refused by the firewall. Where one run's line would hide another's, the later is drawn dashed and raised 3 pixels for each line beneath it, its dot a ring, and its legend says which it is drawn over.</p>
<div class="plots">
`)
	labels := legendLabels(rows)
	for _, name := range attackOrder(rows) {
		var lines []series
		for i, row := range rows {
			if row.Attack != name || row.Result == nil {
				continue
			}
			lines = append(lines, progressSeries(labels[i], colour(len(lines)), row.Result))
		}
		b.WriteString(progressPlot(name, lines))
		b.WriteString("\n")
	}
	b.WriteString("</div>\n")
}

// legendLabels names each run in its attack's plot: the mechanism, and
// where two runs of one attack share it, what tells them apart (their
// configs, else their targets, else their order).
func legendLabels(rows []Row) []string {
	labels := make([]string, len(rows))
	groups := map[[2]string][]int{}
	for i, row := range rows {
		labels[i] = row.Mechanism
		key := [2]string{row.Attack, row.Mechanism}
		groups[key] = append(groups[key], i)
	}
	for _, idx := range groups {
		if len(idx) < 2 {
			continue
		}
		for _, tell := range []func(Row, int) string{
			func(r Row, _ int) string {
				if r.Result == nil || r.Result.Reach == nil || r.Result.Reach.Config == "" {
					return ""
				}
				return filepath.Base(r.Result.Reach.Config)
			},
			func(r Row, _ int) string {
				if r.Result == nil {
					return ""
				}
				_, where, _ := strings.Cut(r.Result.Target, " WHERE ")
				return where
			},
			func(_ Row, k int) string { return fmt.Sprintf("run %d", k+1) },
		} {
			seen, ok := map[string]bool{}, true
			for k, i := range idx {
				t := tell(rows[i], k)
				if t == "" || seen[t] {
					ok = false
					break
				}
				seen[t] = true
			}
			if !ok {
				continue
			}
			for k, i := range idx {
				labels[i] = rows[i].Mechanism + " (" + tell(rows[i], k) + ")"
			}
			break
		}
	}
	return labels
}

// writeAuditSection writes the audit and its plot, saying what it audited.
func writeAuditSection(b *strings.Builder, rep *audit.Report) {
	if rep == nil {
		return
	}
	b.WriteString("<h2>What each mechanism claims, and what an attacker can demonstrate</h2>\n")
	what := fmt.Sprintf("a synthetic table of %d people, not the tables the runs above attacked: its figures stand beside the runs of the same mechanism, marked synthetic, as the mechanism's loss at the audit's parameters, not that deployment's", rep.Rows)
	if rep.ConfigPath != "" {
		what = fmt.Sprintf("config %s, table %s: joined to the runs above on the same config and table", rep.ConfigPath, rep.Table)
	}
	fmt.Fprintf(b, `<p class="note">countwall audit, on %s: the best of %d distinguishing tests on two tables differing in one person, %d trials per table and test, lower bounds at %g%% joint confidence (Clopper-Pearson, Bonferroni), %.0f s. A test without errors can show at most %.2f with these trials.</p>`+"\n",
		esc(what), len(audit.Default(rep.CellRows)), rep.Trials, 100*rep.Confidence, rep.Seconds, audit.Ceiling(rep.Trials, rep.Confidence, len(audit.Default(rep.CellRows))))
	var pts []epsilonPoint
	b.WriteString("<table><tr><th>mechanism</th><th>claimed per query</th><th>best test</th><th>queries</th><th>claimed for the test</th><th>errors (fp/fn)</th><th>audited epsilon</th></tr>\n")
	for _, res := range rep.Results {
		m := res.Best()
		pts = append(pts, epsilonPoint{mechanism: res.Mechanism, claimed: res.ClaimedPerQuery(), testClaim: m.ClaimedEpsilon, audited: m.EpsilonLB})
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td class=num>%d</td><td>%s</td><td>%d/%d</td><td>%s</td></tr>\n",
			esc(res.Mechanism), audit.Claimed(res.ClaimedPerQuery()), esc(m.Distinguisher), m.Queries, audit.Claimed(m.ClaimedEpsilon), m.FalsePos, m.FalseNeg, esc(audit.Audited(m)))
	}
	b.WriteString("</table>\n<div class=\"plots\">")
	b.WriteString(epsilonPlot(pts))
	b.WriteString("</div>\n")
}

// writePaperTables writes the papers' published tables beside ours, both
// labelled as not coming from the runs on this card.
func writePaperTables(b *strings.Builder) {
	b.WriteString("<h2>Published figures: the papers' tables beside ours</h2>\n" +
		`<p class="note">Not from the runs on this card. Each table holds the paper's published figures (rows marked "the paper's", in grey italics) and ours as measured once by the command named (rows marked "ours, separate run").</p>` + "\n")
	for _, t := range PaperTables {
		fmt.Fprintf(b, "<h3>%s</h3>\n<p class=\"note\">%s. Ours: <code>%s</code>.</p>\n<table><tr>", esc(t.Title), esc(t.Source), esc(t.Command))
		for _, c := range t.Columns {
			fmt.Fprintf(b, "<th>%s</th>", esc(c))
		}
		b.WriteString("</tr>\n")
		for _, r := range t.Rows {
			fmt.Fprintf(b, "<tr><td>%s (ours, separate run)</td>", esc(r.Label))
			for _, v := range r.Ours {
				fmt.Fprintf(b, "<td class=num>%s</td>", esc(v))
			}
			fmt.Fprintf(b, "</tr>\n<tr class=\"paper\"><td>%s (the paper's)</td>", esc(r.Label))
			for _, v := range r.Papers {
				fmt.Fprintf(b, "<td class=num>%s</td>", esc(v))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n")
	}
}

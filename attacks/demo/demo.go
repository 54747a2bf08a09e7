// Package demo is `countwall demo`: it generates a people table, answers the
// same queries under every mechanism side by side, runs the attack suite
// over the wire against loopback firewalls and writes the report card.
// Like every package under attacks/, it reaches the mechanisms only through
// the firewall's config and front door.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"countwall/attacks/audit"
	"countwall/attacks/report"
	"countwall/dataset"
	"countwall/proxy"
)

// Options say where and how the demo runs.
type Options struct {
	Dir         string // work directory: database, configs, report card
	Rows        int    // rows in the generated people table
	Attacks     bool   // run the attack suite and print the report card
	Keep        bool   // Dir outlives the run: say where the card is
	HTML        string // also audit and write the card page here; "" writes none
	AuditTrials int    // trials per database and test of that audit
	// Progress, when set, gives a progress callback for a labelled piece of
	// long work (nil from it: no progress shown).
	Progress func(label string) func(done, total int)
}

// progress is o.Progress(label), or nil without one.
func (o Options) progress(label string) func(done, total int) {
	if o.Progress == nil {
		return nil
	}
	return o.Progress(label)
}

// mechanisms are the mechanisms the demo compares, with the parameters it
// shows them under.
var mechanisms = []struct {
	name   string
	params map[string]any
}{
	{"exact", nil},
	{"suppress", map[string]any{"threshold": 10}},
	{"bounded", map[string]any{"range": 2}},
	{"cellkey", map[string]any{"ptable": "abs_example", "suppress_at": 4}},
	{"layered", nil},
	{"laplace", nil},
	{"gaussian", nil},
	{"idp", map[string]any{"k": 1}},
	{"bdp", nil},
}

// queries are the handful of queries answered under every mechanism.
var queries = []string{
	"SELECT COUNT(*) FROM people",
	"SELECT COUNT(*) FROM people WHERE age BETWEEN 30 AND 39 AND sex = 'F'",
	"SELECT COUNT(*) FROM people WHERE suburb = 'suburb_0007' AND age > 85",
	"SELECT COUNT(*) > 100 FROM people WHERE education = 'doctorate'",
	"SELECT sex, COUNT(*) FROM people GROUP BY sex",
}

// Run compares the mechanisms on a handful of queries and, with o.Attacks,
// runs the attack suite against them and prints the report card.
func Run(ctx context.Context, w io.Writer, o Options) error {
	dbPath := filepath.Join(o.Dir, "demo.db")
	if _, err := os.Stat(dbPath); err != nil {
		fmt.Fprintf(w, "Generating a %d-row people table in %s ...\n", o.Rows, dbPath)
		if err := GeneratePeople(ctx, dbPath, o.Rows, o.progress("generating people")); err != nil {
			return fmt.Errorf("generating the demo database: %w", err)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The same queries answered through each mechanism (\"-\" marks a refusal, * a suppressed cell):")
	fmt.Fprintln(w)
	if err := compare(ctx, w, o.Dir, dbPath); err != nil {
		return err
	}
	if !o.Attacks {
		return nil
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Report card: the attack programs, over the wire (SCRAM, loopback), against the mechanism each")
	fmt.Fprintln(w, "was built for and against laplace with a budget (epsilon 0.1 a query, cap 1 per analyst):")
	fmt.Fprintln(w)
	card, runs, pub, err := runAttacks(ctx, o, dbPath)
	if err != nil {
		return err
	}
	if err := report.Print(w, card); err != nil {
		return err
	}
	ordinary, err := assessOrdinary(ctx, o.Dir, dbPath, pub)
	if err != nil {
		return err
	}
	runs = append(runs, ordinary...)
	if err := report.PrintRisk(w, runs); err != nil {
		return err
	}
	if err := report.WriteRisk(filepath.Join(o.Dir, report.RiskFile), runs); err != nil {
		return err
	}
	cardPath := filepath.Join(o.Dir, "report.json")
	if err := report.Write(cardPath, card); err != nil {
		return err
	}
	if o.Keep {
		fmt.Fprintf(w, "\nThe report card is in %s ('countwall attack report %s' prints it again).\n", cardPath, cardPath)
	}
	if o.HTML == "" {
		return nil
	}
	return writePage(ctx, w, o, card)
}

// column is one mechanism's answers to the demo queries, and its
// refusals.
type column struct {
	name    string
	answers []string
	notes   []string
}

// compare prints the demo queries' answers under each mechanism, one
// column each, and the refusals below. The mechanisms answer two at a time,
// each from its own engine and state database.
func compare(ctx context.Context, w io.Writer, dir, dbPath string) error {
	people, err := PeopleTables()
	if err != nil {
		return err
	}
	cols := make([]column, len(mechanisms))
	err = eachAtOnce(ctx, len(mechanisms), suiteWidth, func(ctx context.Context, i int) error {
		var err error
		cols[i], err = answerQueries(ctx, dir, dbPath, people, i)
		return err
	})
	if err != nil {
		return err
	}

	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = len(c.name)
		for _, a := range c.answers {
			widths[i] = max(widths[i], len(a))
		}
	}
	for qi, q := range queries {
		fmt.Fprintf(w, "Q%d  %s\n", qi+1, q)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-4s", "")
	for i, c := range cols {
		fmt.Fprintf(w, "  %*s", widths[i], c.name)
	}
	fmt.Fprintln(w)
	for qi := range queries {
		fmt.Fprintf(w, "%-4s", fmt.Sprintf("Q%d", qi+1))
		for i, c := range cols {
			fmt.Fprintf(w, "  %*s", widths[i], c.answers[qi])
		}
		fmt.Fprintln(w)
	}
	var notes []string
	for _, c := range cols {
		notes = append(notes, c.notes...)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Refusals:")
		for _, n := range notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
	return nil
}

// answerQueries answers the demo queries under the i-th mechanism from an
// engine of its own.
func answerQueries(ctx context.Context, dir, dbPath string, people map[string]any, i int) (column, error) {
	m := mechanisms[i]
	col := column{name: m.name}
	cfg, err := writeConfig(filepath.Join(dir, "countwall-"+m.name+".yaml"), configFile{
		Database:   dbPath,
		State:      filepath.Join(dir, "state-"+m.name+".db"),
		Mechanism:  mechanismName{m.name},
		Mechanisms: mechanismParams(m.name, m.params),
		Budget:     map[string]any{"epsilon_cap": 100},
		Analysts:   map[string]map[string]string{"demo": {}},
		Tables:     people,
	})
	if err != nil {
		return col, err
	}
	engine, err := proxy.Open(ctx, cfg, proxy.Options{})
	if err != nil {
		return col, fmt.Errorf("mechanism %s: %w", m.name, err)
	}
	defer engine.Close()
	for _, q := range queries {
		res, err := engine.Query(ctx, "demo", q)
		if err != nil {
			col.answers = append(col.answers, "-")
			col.notes = append(col.notes, fmt.Sprintf("%s on %q: %v", m.name, q, err))
			continue
		}
		col.answers = append(col.answers, renderAnswers(res))
	}
	return col, nil
}

// writePage audits every mechanism, prints the audit and writes the report
// card page with it.
func writePage(ctx context.Context, w io.Writer, o Options, card []report.Row) error {
	auditDir := filepath.Join(o.Dir, "audit")
	if err := os.MkdirAll(auditDir, 0o755); err != nil {
		return err
	}
	fmt.Fprintln(w)
	rep, err := audit.RunSuite(ctx, audit.SuiteOptions{
		Dir: auditDir, Rows: 200, CellRows: 20, Trials: o.AuditTrials, Confidence: 0.95,
		Mechanisms: audit.Standard(1, 1e-5),
		Progress:   func(m string) func(done, total int) { return o.progress("auditing " + m) },
	})
	if err != nil {
		return err
	}
	if err := audit.Print(w, rep); err != nil {
		return err
	}
	if err := audit.WriteJSON(filepath.Join(o.Dir, "audit.json"), rep); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return report.WriteHTMLCard(w, o.HTML, card, filepath.Join(o.Dir, "audit.json"))
}

// renderAnswers shows a result's count column compactly: one value, or the
// values of a small GROUP BY separated by slashes; * is a withheld count.
func renderAnswers(res *proxy.Result) string {
	parts := make([]string, 0, len(res.Rows))
	last := len(res.Columns) - 1
	for i, row := range res.Rows {
		v := row[last].Format(res.Columns[last].Type)
		switch {
		case i < len(res.Suppressed) && res.Suppressed[i]:
			v = "*" // withheld (NULL)
		case res.Columns[last].Type == proxy.ColumnFloat8:
			v = fmt.Sprintf("%.1f", row[last].Float)
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, "/")
}

// GeneratePeople writes the demo's people table (seed 1) to path.
func GeneratePeople(ctx context.Context, path string, rows int, progress func(done, total int)) error {
	var p dataset.Progress
	if progress != nil {
		p = func(done, total int64) { progress(int(done), int(total)) }
	}
	return dataset.GeneratePeople(ctx, path, dataset.PeopleOptions{Rows: int64(rows), Seed: 1}, dataset.WriteOptions{Progress: p})
}

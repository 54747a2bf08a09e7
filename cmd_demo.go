package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"countwall/attacks/audit"
	"countwall/attacks/report"
	"countwall/config"
	"countwall/dataset"
	"countwall/mechanisms"
	"countwall/proxy"
)

// demoMechanisms are the mechanisms the demo compares, with the parameters it
// shows them under.
var demoMechanisms = []struct {
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

// demoQueries are the handful of queries answered under every mechanism.
var demoQueries = []string{
	"SELECT COUNT(*) FROM people",
	"SELECT COUNT(*) FROM people WHERE age BETWEEN 30 AND 39 AND sex = 'F'",
	"SELECT COUNT(*) FROM people WHERE suburb = 'suburb_0007' AND age > 85",
	"SELECT COUNT(*) > 100 FROM people WHERE education = 'doctorate'",
	"SELECT sex, COUNT(*) FROM people GROUP BY sex",
}

func init() {
	var rows int
	var keep string
	var noAttacks bool
	var htmlOut string
	var auditTrials int
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Generate a demo database, compare every mechanism, run the attack suite and print the report card",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			dir, cleanup, err := workDir(keep, "countwall-demo-")
			if err != nil {
				return err
			}
			defer cleanup()
			return runDemo(ctx, cmd.OutOrStdout(), dir, rows, !noAttacks, keep != "", demoPage{html: htmlOut, auditTrials: auditTrials})
		},
	}
	cmd.Flags().IntVar(&rows, "rows", 20000, "rows in the generated people table")
	cmd.Flags().StringVar(&keep, "dir", "", "keep the demo database, configs and report card in this directory instead of a temporary one")
	cmd.Flags().BoolVar(&noAttacks, "no-attacks", false, "compare the mechanisms only, without the attack suite")
	cmd.Flags().StringVar(&htmlOut, "html", "", "also audit every mechanism and write the report card as one self-contained HTML page with plots")
	cmd.Flags().IntVar(&auditTrials, "audit-trials", 200, "trials per database and test of the audit that --html runs")
	rootCmd.AddCommand(cmd)
}

// runDemo compares the mechanisms on a handful of queries and, withAttacks,
// runs the attack suite against them and prints the report card; keep says
// the directory outlives the run.
func runDemo(ctx context.Context, w io.Writer, dir string, rows int, withAttacks, keep bool, page demoPage) error {
	dbPath := filepath.Join(dir, "demo.db")
	if _, err := os.Stat(dbPath); err != nil {
		fmt.Fprintf(w, "Generating a %d-row people table in %s ...\n", rows, dbPath)
		if err := generateDemoDB(ctx, dbPath, rows); err != nil {
			return fmt.Errorf("generating the demo database: %w", err)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The same queries answered through each mechanism (\"-\" marks a refusal, * a suppressed cell):")
	fmt.Fprintln(w)

	type column struct {
		name    string
		answers []string
		notes   []string
	}
	var cols []column
	registered := map[string]bool{}
	for _, n := range mechanisms.Names() {
		registered[n] = true
	}
	for _, m := range demoMechanisms {
		if !registered[m.name] {
			continue
		}
		cfg, err := demoConfig(dir, dbPath, m.name, m.params)
		if err != nil {
			return err
		}
		engine, err := proxy.Open(ctx, cfg, proxy.Options{})
		if err != nil {
			return fmt.Errorf("mechanism %s: %w", m.name, err)
		}
		col := column{name: m.name}
		for _, q := range demoQueries {
			res, err := engine.Query(ctx, "demo", q)
			if err != nil {
				col.answers = append(col.answers, "-")
				col.notes = append(col.notes, fmt.Sprintf("%s on %q: %v", m.name, q, err))
				continue
			}
			col.answers = append(col.answers, renderAnswers(res))
		}
		engine.Close()
		cols = append(cols, col)
	}

	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = len(c.name)
		for _, a := range c.answers {
			widths[i] = max(widths[i], len(a))
		}
	}
	for qi, q := range demoQueries {
		fmt.Fprintf(w, "Q%d  %s\n", qi+1, q)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-4s", "")
	for i, c := range cols {
		fmt.Fprintf(w, "  %*s", widths[i], c.name)
	}
	fmt.Fprintln(w)
	for qi := range demoQueries {
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
	if !withAttacks {
		return nil
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Report card: the attack programs, over the wire (SCRAM, loopback), against the mechanism each")
	fmt.Fprintln(w, "was built for and against laplace with a budget (epsilon 0.1 a query, cap 1 per analyst):")
	fmt.Fprintln(w)
	card, err := runDemoAttacks(ctx, dir, dbPath)
	if err != nil {
		return err
	}
	if err := report.Print(w, card); err != nil {
		return err
	}
	cardPath := filepath.Join(dir, "report.json")
	if err := report.Write(cardPath, card); err != nil {
		return err
	}
	if keep {
		fmt.Fprintf(w, "\nThe report card is in %s ('countwall attack report %s' prints it again).\n", cardPath, cardPath)
	}
	if page.html == "" {
		return nil
	}
	return writeDemoPage(ctx, w, dir, page, card)
}

// demoPage says whether and how the demo writes the HTML report card.
type demoPage struct {
	html        string // the page's path; "" writes none
	auditTrials int
}

// writeDemoPage audits every mechanism, prints the audit and writes the
// report card page with it.
func writeDemoPage(ctx context.Context, w io.Writer, dir string, page demoPage, card []report.Row) error {
	auditDir := filepath.Join(dir, "audit")
	if err := os.MkdirAll(auditDir, 0o755); err != nil {
		return err
	}
	fmt.Fprintln(w)
	rep, err := audit.RunSuite(ctx, audit.SuiteOptions{
		Dir: auditDir, Rows: 200, CellRows: 20, Trials: page.auditTrials, Confidence: 0.95,
		Mechanisms: audit.Standard(1, 1e-5),
		Progress:   func(m string) func(done, total int) { return terminalProgress(os.Stderr, "auditing "+m) },
	})
	if err != nil {
		return err
	}
	if err := audit.Print(w, rep); err != nil {
		return err
	}
	if err := audit.WriteJSON(filepath.Join(dir, "audit.json"), rep); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return writeHTMLCard(w, page.html, card, filepath.Join(dir, "audit.json"))
}

// renderAnswers shows a result's count column compactly: one value, or the
// values of a small GROUP BY separated by slashes.
func renderAnswers(res *proxy.Result) string {
	parts := make([]string, 0, len(res.Rows))
	last := len(res.Columns) - 1
	for i, row := range res.Rows {
		v := formatValue(res.Columns[last].Type, row[last])
		if res.Columns[last].Type == proxy.ColumnFloat8 {
			v = fmt.Sprintf("%.1f", row[last].Float)
		}
		if i < len(res.Suppressed) && res.Suppressed[i] {
			v += "*"
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, "/")
}

// demoConfig writes and loads a config for the demo database.
func demoConfig(dir, dbPath, mechanism string, params map[string]any) (*config.Config, error) {
	body := fmt.Sprintf("database: %s\nstate: %s\n%sbudget:\n  epsilon_cap: 100\nanalysts:\n  demo: {}\n%s",
		dbPath, filepath.Join(dir, "state-"+mechanism+".db"), mechanismYAML(mechanism, params), demoTableYAML())
	path := filepath.Join(dir, "countwall-"+mechanism+".yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		return nil, err
	}
	return config.Load(path, nil)
}

// mechanismYAML is the config's mechanism section with the parameters in
// the file, so that a config the demo leaves behind (--dir) runs as it ran.
func mechanismYAML(mechanism string, params map[string]any) string {
	out := "mechanism:\n  name: " + mechanism + "\n"
	if len(params) == 0 {
		return out
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %v", k, params[k])
	}
	return out + "mechanisms:\n  " + mechanism + ": {" + strings.Join(parts, ", ") + "}\n"
}

// demoTableYAML is the people table's config: the generator's public
// domains, except suburb, left undeclared to show how mechanisms differ on
// GROUP BY over a column without a public domain.
func demoTableYAML() string {
	t := dataset.PeopleTable()
	for i := range t.Columns {
		if t.Columns[i].Name == "suburb" {
			t.Columns[i].Categories = nil
		}
	}
	return t.ConfigSnippet()
}

// generateDemoDB writes the demo's people table.
func generateDemoDB(ctx context.Context, path string, rows int) error {
	progress, done := datasetProgress(os.Stderr, "generating people")
	defer done()
	return dataset.GeneratePeople(ctx, path, dataset.PeopleOptions{Rows: int64(rows), Seed: 1}, dataset.WriteOptions{Progress: progress})
}

// workDir is the directory a command works in: keep when given (made if
// need be, left in place), else a temporary one that cleanup removes.
func workDir(keep, prefix string) (dir string, cleanup func(), err error) {
	if keep != "" {
		return keep, func() {}, os.MkdirAll(keep, 0o755)
	}
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

package demo

import (
	"context"
	"flag"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"countwall/attacks/audit"
	"countwall/attacks/report"
)

// updateCard regenerates docs/report-card.png from the demo's page at the
// demo's own size: go test ./attacks/demo -run TestDemoPageRenders -update-card
var updateCard = flag.Bool("update-card", false, "write docs/report-card.png from the demo's page (the demo's default rows and audit)")

// Screenshot size of the page: the card, the plots and the audit fit in it.
const shotWidth, shotHeight = 1200, 3000

var (
	progressPlotTag = regexp.MustCompile(`<svg class="plot progress"[^>]*aria-label="([^"]*)"`)
	lossCell        = regexp.MustCompile(`<td>([^<]*)</td></tr>`)
)

// The demo's page (countwall demo --html) renders in a headless Chromium:
// one progress plot per attack on the card and the audit's plot, in the
// page and in the DOM the browser built; the audited loss beside every
// run whose mechanism the audit measured, marked as the synthetic audit's;
// a screenshot of the window's size.
func TestDemoPageRenders(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: builds the demo's page (attack suite, audit, Chromium; about 30 s): skipped under -short; go test ./... runs it")
	}
	browser, err := report.FindChromium()
	if err != nil {
		t.Fatal(err)
	}
	rows, trials := 2000, 20
	if *updateCard {
		rows, trials = 20000, 200 // countwall demo --html's defaults
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	page := filepath.Join(dir, "page.html")
	if err := Run(ctx, io.Discard, Options{Dir: dir, Rows: rows, Attacks: true, HTML: page, AuditTrials: trials}); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	card, err := report.Read(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var attacksOnCard []string
	seen := map[string]bool{}
	for _, row := range card {
		if !seen[row.Attack] {
			seen[row.Attack] = true
			attacksOnCard = append(attacksOnCard, row.Attack)
		}
	}
	shot := filepath.Join(dir, "page.png")
	dom, err := report.Render(ctx, browser, page, shot, shotWidth, shotHeight)
	if err != nil {
		t.Fatal(err)
	}
	for name, html := range map[string]string{"page": string(body), "rendered DOM": dom} {
		var plots []string
		for _, m := range progressPlotTag.FindAllStringSubmatch(html, -1) {
			plots = append(plots, m[1])
		}
		if strings.Join(plots, ",") != strings.Join(attacksOnCard, ",") {
			t.Errorf("the %s's progress plots are %q, want one per attack on the card %q", name, plots, attacksOnCard)
		}
		if n := strings.Count(html, `<svg class="plot epsilon"`); n != 1 {
			t.Errorf("the %s has %d audit plots, want 1", name, n)
		}
	}
	audited := map[string]bool{}
	for _, m := range audit.Standard(0, 0) {
		audited[m.Name] = true
	}
	table, _, _ := strings.Cut(string(body), "<h2>Each attack")
	cells := lossCell.FindAllStringSubmatch(table, -1)
	if len(cells) != len(card) {
		t.Fatalf("%d card rows on the page, want %d", len(cells), len(card))
	}
	for i, row := range card {
		want := row.Result != nil && audited[row.Result.Mechanism]
		if got := strings.Contains(cells[i][1], " (synthetic neighbours"); got != want {
			t.Errorf("%s under %s: audited loss %q, want the synthetic audit's: %v", row.Attack, row.Mechanism, cells[i][1], want)
		}
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != shotWidth || b.Dy() != shotHeight {
		t.Errorf("the screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), shotWidth, shotHeight)
	}
	if *updateCard {
		png, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "report-card.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

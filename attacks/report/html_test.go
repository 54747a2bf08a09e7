package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"countwall/attacks"
	"countwall/attacks/audit"
)

// samplePage is a card of three attacks (one with a progress series, one
// refused part way, one failed), two runs of noise-remover against laplace
// on two configs, runs over the wire and in process, and an audit of the
// config and table of the in-process runs (layered by kind of neighbour, as
// audit --config names them).
func samplePage() Page {
	success := func(f float64) *float64 { return &f }
	inProcess := func(config string) *attacks.Reach {
		return &attacks.Reach{Transport: attacks.TransportInProcess, Config: "/srv/" + config, Table: "people"}
	}
	wire := &attacks.Reach{Transport: attacks.TransportWire, Server: "127.0.0.1:5433/countwall", Table: "people"}
	rows := []Row{
		{Attack: "noise-remover", Mechanism: "cellkey", Result: &attacks.Result{Attack: "noise-remover", Mechanism: "cellkey", Queries: 10601,
			CellsTotal: 101, CellsExact: ptr(96), Success: success(0.95), Reach: wire,
			Progress: []attacks.ProgressPoint{{Queries: 101, Done: 1, Total: 203}, {Queries: 5000, Done: 100, Total: 203}, {Queries: 10601, Done: 203, Total: 203}}}},
		{Attack: "noise-remover", Mechanism: "laplace", Result: &attacks.Result{Attack: "noise-remover", Mechanism: "laplace", Queries: 11, Refused: 1,
			CellsTotal: 101, CellsExact: ptr(0), Success: success(0), Spent: map[string]float64{"dp": 1}, Reach: inProcess("a.yaml"),
			Progress: []attacks.ProgressPoint{{Queries: 10, Done: 1, Total: 203}}}},
		{Attack: "noise-remover", Mechanism: "laplace", Result: &attacks.Result{Attack: "noise-remover", Mechanism: "laplace", Queries: 21, Refused: 1,
			CellsTotal: 101, CellsExact: ptr(0), Success: success(0), Spent: map[string]float64{"dp": 2}, Reach: inProcess("b.yaml"),
			Progress: []attacks.ProgressPoint{{Queries: 20, Done: 2, Total: 203}}}},
		{Attack: "differencing", Mechanism: "suppress", Result: &attacks.Result{Attack: "differencing", Mechanism: "suppress", Queries: 2,
			Recovered: 41, Truth: ptr(int64(41)), Exact: ptr(true), Success: success(1), Reach: inProcess("a.yaml")}},
		{Attack: "differencing", Mechanism: "laplace", Err: "connection refused <&>"},
		{Attack: "split-averaging", Mechanism: "layered", Result: &attacks.Result{Attack: "split-averaging", Mechanism: "layered", Queries: 400,
			Recovered: 1314, Truth: ptr(int64(1320)), Exact: ptr(false), Success: success(0), Reach: inProcess("a.yaml")}},
	}
	rep := &audit.Report{Trials: 1000, Confidence: 0.95, Rows: 200, CellRows: 20, Seconds: 12, ConfigPath: "/srv/a.yaml", Table: "people",
		Results: []*audit.Result{
			{Mechanism: "suppress", Measurements: []audit.Measurement{{Distinguisher: "count", Queries: 1, EpsilonLB: 5.28}}},
			{Mechanism: "laplace", Measurements: []audit.Measurement{
				{Distinguisher: "count", Queries: 1, ClaimedEpsilon: 1, EpsilonLB: 0.6},
				{Distinguisher: "average", Queries: 25, ClaimedEpsilon: 25, EpsilonLB: 2.7}}},
			{Mechanism: "idp", Measurements: []audit.Measurement{{Distinguisher: "threshold", Queries: 1, ClaimedEpsilon: 1e-10, EpsilonLB: 5.28}}},
			{Mechanism: "layered (removed)", Measurements: []audit.Measurement{{Distinguisher: "count", Queries: 1, EpsilonLB: 0.5}}},
			{Mechanism: "layered (several-rows)", Measurements: []audit.Measurement{{Distinguisher: "count", Queries: 1, EpsilonLB: 1.5}}},
			{Mechanism: "cellkey", Measurements: []audit.Measurement{{Distinguisher: "count", Queries: 1}}},
		}}
	return Page{Rows: rows, Audit: rep, Generated: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
}

// The page holds the card, one progress plot per attack, the audit with its
// plot and both papers' tables; it loads nothing from the network, and
// values from results are escaped. Each run says how it reached the
// firewall; the audit is joined only to the runs on its config and table.
func TestWriteHTML(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, samplePage()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<td>noise-remover</td><td>cellkey</td><td>wire 127.0.0.1:5433/countwall, table people</td><td>96 of 101 exact (95.0%)</td><td class=num>10601</td>",
		// the cellkey run went over the wire with no config: not joined
		"<td>0 of 101 exact (0.0%)</td><td class=num>11</td><td class=num>1</td><td>dp 1</td><td>≥ 2.70 (claimed 25 for that test)</td>",
		"<td>0 of 101 exact (0.0%)</td><td class=num>21</td><td class=num>1</td><td>dp 2</td><td>-</td>",
		`<td>differencing</td><td>suppress</td><td><span title="/srv/a.yaml">in process, config a.yaml, table people</span></td><td>41, exact</td><td class=num>2</td><td class=num>0</td><td>nothing</td><td>≥ 5.28</td>`,
		"failed: connection refused &lt;&amp;&gt;",
		"Runs: 1 over the PostgreSQL wire protocol, 4 in process (no wire), 1 with no record of how they reached the firewall.",
		// a deployment's audit: the best of the neighbour kinds
		"<td>1314, truth 1320</td><td class=num>400</td><td class=num>0</td><td>nothing</td><td>≥ 1.50 (neighbour several-rows)</td>",
		`aria-label="noise-remover"`, `aria-label="differencing"`,
		"<td>idp</td><td>1e-10</td><td>threshold</td>",
		"Asghar and Kaafar, Table 3", "Protivash et al., Table 1", `<tr class="paper"><td>±2 (the paper's)</td><td class=num>103.2</td>`,
		"<td>±2 (ours, separate run)</td>", "Not from the runs on this card.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "Each attack ran over the PostgreSQL wire protocol") {
		t.Error("the page says every run went over the wire")
	}
	if n := strings.Count(page, `<svg class="plot`); n != 4 {
		t.Errorf("%d plots, want 4 (three attacks and the audit)", n)
	}
	for _, banned := range []string{"http://", "https://", "<script", "<link"} {
		if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), banned) {
			t.Errorf("page contains %q: it must load nothing", banned)
		}
	}
}

// The audited loss beside each run: an audit of the run's own config and
// table joins it; an audit on synthetic neighbours shows the mechanism's
// figure marked as such; any other audit, none.
func TestAuditJoin(t *testing.T) {
	p := samplePage()
	synthetic := *p.Audit
	synthetic.ConfigPath, synthetic.Table = "", ""
	otherTable := *p.Audit
	otherTable.Table = "bank"
	byRun := func(rep *audit.Report) []string {
		var got []string
		for _, row := range p.Rows {
			got = append(got, auditJoin(rep, row))
		}
		return got
	}
	for _, tc := range []struct {
		name    string
		rep     *audit.Report
		heading string
		want    []string // one per run of samplePage
	}{
		{"the runs' own config and table", p.Audit, "audited loss (same config and table)",
			[]string{"-", "≥ 2.70 (claimed 25 for that test)", "-", "≥ 5.28", "-", "≥ 1.50 (neighbour several-rows)"}},
		{"synthetic neighbours", &synthetic, "audited loss of the mechanism (on synthetic neighbours, not this deployment)",
			[]string{"0 (not shown) (synthetic neighbours)", "≥ 2.70 (synthetic neighbours; claimed 25 for that test)",
				"≥ 2.70 (synthetic neighbours; claimed 25 for that test)", "≥ 5.28 (synthetic neighbours)", "-",
				"≥ 1.50 (synthetic neighbours; neighbour several-rows)"}},
		{"another table", &otherTable, "audited loss (same config and table)", []string{"-", "-", "-", "-", "-", "-"}},
		{"no audit", nil, "audited loss (no audit)", []string{"-", "-", "-", "-", "-", "-"}},
	} {
		if got := byRun(tc.rep); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: audited losses %q, want %q", tc.name, got, tc.want)
		}
		if got := lossHeading(tc.rep); got != tc.heading {
			t.Errorf("%s: heading %q, want %q", tc.name, got, tc.heading)
		}
	}
	var b bytes.Buffer
	p.Audit = &synthetic
	if err := WriteHTML(&b, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<th>audited loss of the mechanism (on synthetic neighbours, not this deployment)</th>",
		"<td>dp 2</td><td>≥ 2.70 (synthetic neighbours; claimed 25 for that test)</td></tr>",
		"a synthetic table of 200 people, not the tables the runs above attacked: its figures stand beside the runs of the same mechanism, marked synthetic",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// The page renders in a real headless Chromium: the DOM it builds holds
// every plot, and the screenshot is of the window's size and neither blank
// nor a single colour.
func TestHTMLRendersInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: renders the page in a headless Chromium: skipped under -short; go test ./... runs it")
	}
	browser, err := FindChromium()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "card.html")
	if err := WriteHTMLFile(path, samplePage()); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "card.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dom, err := Render(ctx, browser, path, shot, 1200, 1800)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(dom, `<svg class="plot`); n != 4 {
		t.Errorf("the rendered DOM has %d plots, want 4", n)
	}
	checkRenderedCard(t, dom)
	img := readScreenshot(t, shot, 1200, 1800)
	dark, coloured, total := inkShare(img)
	// The card's text and the plots' frames put dark pixels on the page,
	// the lines coloured ones; a blank or failed page has neither.
	if dark < total/200 || coloured < total/2000 {
		t.Errorf("the screenshot looks blank: %d dark and %d coloured pixels of %d", dark, coloured, total)
	}
}

// readScreenshot decodes the PNG at path, wanting it width by height.
func readScreenshot(t *testing.T, path string, width, height int) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != width || b.Dy() != height {
		t.Errorf("the screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), width, height)
	}
	return img
}

// inkShare counts dark pixels (text, frames) and saturated ones (the plots'
// colours) in img.
func inkShare(img image.Image) (dark, coloured, total int) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			total++
			if r+g+bl < 300 {
				dark++
			}
			if max(r, g, bl)-min(r, g, bl) > 80 {
				coloured++
			}
		}
	}
	return dark, coloured, total
}

var (
	svgPlot   = regexp.MustCompile(`(?s)<svg class="plot progress".*?</svg>`)
	tickText  = regexp.MustCompile(`<text class="tick"[^>]*>([^<]*)</text>`)
	legendTxt = regexp.MustCompile(`<text class="legend"[^>]*>([^<]*)</text>`)
)

// checkRenderedCard reads the card as the browser built it: every run says
// how it reached the firewall, the audit is joined only where config and
// table match, the papers' figures are labelled as theirs, the log axes
// read 1, 10, 100, 1k, and no plot has two legend entries alike.
func checkRenderedCard(t *testing.T, dom string) {
	t.Helper()
	for _, want := range []string{
		"wire 127.0.0.1:5433/countwall, table people", "in process, config a.yaml, table people", "in process, config b.yaml, table people",
		"(claimed 25 for that test)", "(the paper's)", "(ours, separate run)", "Not from the runs on this card.",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered card lacks %q", want)
		}
	}
	if strings.Contains(dom, "Each attack ran over the PostgreSQL wire protocol") {
		t.Error("the rendered card says every run went over the wire")
	}
	plots := svgPlot.FindAllString(dom, -1)
	if len(plots) != 3 {
		t.Fatalf("%d progress plots, want 3", len(plots))
	}
	var ticks []string
	for _, m := range tickText.FindAllStringSubmatch(plots[0], -1) {
		ticks = append(ticks, m[1])
	}
	// noise-remover's longest run sent 10,601 queries: the axis ends at 100k.
	if got, want := strings.Join(ticks, " "), "1 10 100 1k 10k 100k"; got != want {
		t.Errorf("the noise-remover plot's axis reads %q, want %q", got, want)
	}
	for _, plot := range plots {
		seen := map[string]bool{}
		for _, m := range legendTxt.FindAllStringSubmatch(plot, -1) {
			if seen[m[1]] {
				t.Errorf("two legend entries read %q", m[1])
			}
			seen[m[1]] = true
		}
	}
	if !strings.Contains(plots[0], ">laplace (a.yaml)<") || !strings.Contains(plots[0], ">laplace (b.yaml)<") {
		t.Errorf("the two laplace runs of noise-remover are not told apart by their configs")
	}
}

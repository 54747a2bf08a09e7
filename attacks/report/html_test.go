package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"countwall/attacks"
	"countwall/attacks/audit"
)

// samplePage is a card of three attacks (one with a progress series, one
// refused part way, one failed) and an audit of three mechanisms.
func samplePage() Page {
	success := func(f float64) *float64 { return &f }
	rows := []Row{
		{Attack: "noise-remover", Mechanism: "cellkey", Result: &attacks.Result{Attack: "noise-remover", Mechanism: "cellkey", Queries: 10601,
			CellsTotal: 101, CellsExact: ptr(96), Success: success(0.95),
			Progress: []attacks.ProgressPoint{{Queries: 101, Done: 1, Total: 203}, {Queries: 5000, Done: 100, Total: 203}, {Queries: 10601, Done: 203, Total: 203}}}},
		{Attack: "noise-remover", Mechanism: "laplace", Result: &attacks.Result{Attack: "noise-remover", Mechanism: "laplace", Queries: 11, Refused: 1,
			CellsTotal: 101, CellsExact: ptr(0), Success: success(0), Spent: map[string]float64{"dp": 1},
			Progress: []attacks.ProgressPoint{{Queries: 10, Done: 1, Total: 203}}}},
		{Attack: "differencing", Mechanism: "suppress", Result: &attacks.Result{Attack: "differencing", Mechanism: "suppress", Queries: 2,
			Recovered: 41, Truth: ptr(int64(41)), Exact: ptr(true), Success: success(1)}},
		{Attack: "differencing", Mechanism: "laplace", Err: "connection refused <&>"},
	}
	rep := &audit.Report{Trials: 1000, Confidence: 0.95, Rows: 200, CellRows: 20, Seconds: 12, Results: []*audit.Result{
		{Mechanism: "suppress", Measurements: []audit.Measurement{{Distinguisher: "count", Queries: 1, EpsilonLB: 5.28}}},
		{Mechanism: "laplace", Measurements: []audit.Measurement{
			{Distinguisher: "count", Queries: 1, ClaimedEpsilon: 1, EpsilonLB: 0.6},
			{Distinguisher: "average", Queries: 25, ClaimedEpsilon: 25, EpsilonLB: 2.7}}},
		{Mechanism: "idp", Measurements: []audit.Measurement{{Distinguisher: "threshold", Queries: 1, ClaimedEpsilon: 1e-10, EpsilonLB: 5.28}}},
		{Mechanism: "cellkey", Measurements: []audit.Measurement{{Distinguisher: "count", Queries: 1}}},
	}}
	return Page{Rows: rows, Audit: rep, Generated: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
}

// The page holds the card, one progress plot per attack, the audit with its
// plot and both papers' tables; it loads nothing from the network, and
// values from results are escaped.
func TestWriteHTML(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, samplePage()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<td>noise-remover</td><td>cellkey</td><td>96 of 101 exact (95.0%)</td><td class=num>10601</td>",
		"<td>differencing</td><td>suppress</td><td>41, exact</td><td class=num>2</td><td class=num>0</td><td>nothing</td><td>≥ 5.28</td>",
		"failed: connection refused &lt;&amp;&gt;",
		`aria-label="noise-remover"`, `aria-label="differencing"`,
		"<td>idp</td><td>1e-10</td><td>threshold</td>",
		"Asghar and Kaafar, Table 3", "Protivash et al., Table 1", `<tr class="paper"><td>±2 (paper)</td><td class=num>103.2</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, `<svg class="plot`); n != 3 {
		t.Errorf("%d plots, want 3 (two attacks and the audit)", n)
	}
	for _, banned := range []string{"http://", "https://", "<script", "<link"} {
		if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), banned) {
			t.Errorf("page contains %q: it must load nothing", banned)
		}
	}
}

// The page renders in a real headless Chromium: the DOM it builds holds
// every plot, and the screenshot is neither blank nor a single colour.
func TestHTMLRendersInChromium(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("chromium is not installed (apt-get install chromium); the page is not rendered")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "card.html")
	if err := WriteHTMLFile(path, samplePage()); err != nil {
		t.Fatal(err)
	}
	// One start of the browser both dumps the DOM it built and takes the
	// screenshot.
	shot := filepath.Join(dir, "card.png")
	dom := runChromium(t, browser, dir, "--dump-dom", "--screenshot="+shot, "--window-size=1200,1800", "file://"+path)
	if n := strings.Count(string(dom), `<svg class="plot`); n != 3 {
		t.Errorf("the rendered DOM has %d plots, want 3", n)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	dark, coloured, total := inkShare(img)
	// The card's text and the plots' frames put dark pixels on the page,
	// the lines coloured ones; a blank or failed page has neither.
	if dark < total/200 || coloured < total/2000 {
		t.Errorf("the screenshot looks blank: %d dark and %d coloured pixels of %d", dark, coloured, total)
	}
}

func runChromium(t *testing.T, browser, dir string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile")}
	cmd := exec.CommandContext(ctx, browser, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
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

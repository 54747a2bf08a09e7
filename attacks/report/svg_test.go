package report

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"countwall/attacks"
)

// A run's line ends on its dot: the success, whatever the steps said.
func TestProgressSeriesEndsOnTheDot(t *testing.T) {
	success := func(f float64) *float64 { return &f }
	for _, tc := range []struct {
		name string
		r    attacks.Result
		want []xy
	}{
		{"every step done but not exact (split-averaging)", attacks.Result{Queries: 400, Success: success(0),
			Progress: []attacks.ProgressPoint{{Queries: 200, Done: 100, Total: 200}, {Queries: 400, Done: 200, Total: 200}}},
			[]xy{{0, 0}, {200, 0.5}, {400, 1}, {400, 0}}},
		{"no steps recorded, exact", attacks.Result{Queries: 2, Success: success(1)}, []xy{{0, 0}, {2, 1}}},
		{"no steps recorded, wrong", attacks.Result{Queries: 2, Success: success(0)}, []xy{{0, 0}, {2, 0}}},
		{"steps end where it succeeded", attacks.Result{Queries: 10, Success: success(1),
			Progress: []attacks.ProgressPoint{{Queries: 10, Done: 4, Total: 4}}}, []xy{{0, 0}, {10, 1}}},
		{"refused part way", attacks.Result{Queries: 11, Refused: 1, Success: success(0),
			Progress: []attacks.ProgressPoint{{Queries: 9, Done: 9, Total: 203}}}, []xy{{0, 0}, {9, 9.0 / 203}, {11, 0}}},
		{"unscored, steps recorded", attacks.Result{Queries: 8, Progress: []attacks.ProgressPoint{{Queries: 6, Done: 3, Total: 4}}},
			[]xy{{0, 0}, {6, 0.75}, {8, 0.75}}},
		{"unscored, undecided", attacks.Result{Queries: 2, Undecided: true}, []xy{{0, 0}, {2, 0}}},
	} {
		s := progressSeries("run", "#000", &tc.r)
		if !reflect.DeepEqual(s.points, tc.want) {
			t.Errorf("%s: points %v, want %v", tc.name, s.points, tc.want)
		}
		if s.final != nil && *s.final != s.points[len(s.points)-1] {
			t.Errorf("%s: the dot %v is not the line's last point %v", tc.name, *s.final, s.points[len(s.points)-1])
		}
		if (s.final != nil) != (tc.r.Success != nil) {
			t.Errorf("%s: dot %v for success %v", tc.name, s.final, tc.r.Success)
		}
	}
}

// Where one run's line would hide another's, the later is dashed, raised
// and ringed, and its legend says which line it lies on; lines apart are
// drawn plain.
func TestProgressPlotShowsCoincidingLines(t *testing.T) {
	success := func(f float64) *float64 { return &f }
	exact := &attacks.Result{Queries: 2, Success: success(1)}
	reconstruct := func(first, last int) *attacks.Result {
		return &attacks.Result{Queries: last, Success: success(1), Progress: []attacks.ProgressPoint{
			{Queries: first, Done: 1, Total: 19}, {Queries: last, Done: 19, Total: 19}}}
	}
	for _, tc := range []struct {
		name    string
		runs    []*attacks.Result
		want    []string // in the plot, in order
		notWant []string
	}{
		{"differencing: suppress and laplace both exact in 2 queries", []*attacks.Result{exact, exact}, []string{
			`<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="60.0,255.0 165.4,30.0"/>`,
			`<circle cx="165.4" cy="30.0" r="5" fill="#1f77b4"/>`,
			`<polyline fill="none" stroke="#d62728" stroke-width="2" stroke-dasharray="7 4" points="60.0,252.0 165.4,27.0"/>`,
			`<circle class="ring" cx="165.4" cy="27.0" r="8" fill="none" stroke="#d62728" stroke-width="2"/>`,
			`<line x1="422" y1="58" x2="440" y2="58" stroke="#d62728" stroke-width="3" stroke-dasharray="7 4"/><text class="legend" x="446" y="62" font-family="sans-serif" font-size="11">run 1</text>`,
			`>over run 0</text>`,
		}, nil},
		{"idp-reconstruct: idp and exact a few queries apart", []*attacks.Result{reconstruct(48, 1746), reconstruct(49, 1760)},
			[]string{`stroke="#d62728" stroke-width="2" stroke-dasharray="7 4"`, ">over run 0</text>"}, nil},
		{"three alike: the third over both", []*attacks.Result{exact, exact, exact},
			[]string{`stroke-dasharray="7 4"`, `stroke="#2ca02c" stroke-width="2" stroke-dasharray="2 3"`, `r="11"`, ">over run 0 and run 1</text>"}, nil},
		{"apart: exact and wrong", []*attacks.Result{exact, {Queries: 2, Success: success(0)}}, nil,
			[]string{"stroke-dasharray", `class="ring"`, "legend-note"}},
	} {
		var lines []series
		for i, r := range tc.runs {
			lines = append(lines, progressSeries(fmt.Sprintf("run %d", i), colour(i), r))
		}
		plot := progressPlot("plot", lines)
		at := 0
		for _, w := range tc.want {
			k := strings.Index(plot[at:], w)
			if k < 0 {
				t.Errorf("%s: the plot lacks %q after byte %d:\n%s", tc.name, w, at, plot)
				break
			}
			at += k + len(w)
		}
		for _, w := range tc.notWant {
			if strings.Contains(plot, w) {
				t.Errorf("%s: the plot holds %q", tc.name, w)
			}
		}
	}
}

func TestWithin(t *testing.T) {
	line := []xy{{0, 0}, {100, 0}, {100, 100}}
	for _, tc := range []struct {
		name string
		a    []xy
		want bool
	}{
		{"on the segments", []xy{{50, 0}, {100, 60}}, true},
		{"4 pixels off", []xy{{50, 4}, {96, 50}}, true},
		{"5 pixels off", []xy{{50, 5}}, false},
		{"past the end", []xy{{100, 105}}, false},
		{"empty", nil, false},
	} {
		if got := within(tc.a, line, coincidePx); got != tc.want {
			t.Errorf("%s: within = %v, want %v", tc.name, got, tc.want)
		}
	}
}

package report

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// The plots are drawn as inline SVG by hand: a few lines and markers need
// no plotting library, and the page stays one self-contained file.

// palette gives each mechanism the same colour in every plot.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

func colour(i int) string { return palette[i%len(palette)] }

const (
	plotW, plotH            = 560, 300
	padL, padR, padT, padB  = 60, 150, 30, 45
	innerW, innerH          = plotW - padL - padR, plotH - padT - padB
	markerRadius            = 4
	defaultFont             = `font-family="sans-serif" font-size="11"`
	progressPlotClass       = "plot progress"
	claimedAuditedPlotClass = "plot epsilon"
)

// xy is one point of a series.
type xy struct{ x, y float64 }

// series is one line of a plot with, optionally, a marked final point.
type series struct {
	name   string
	colour string
	points []xy
	final  *xy // drawn as a filled dot
}

// logAxis maps values onto [0, 1] on a log10 scale between lo and hi.
type logAxis struct{ lo, hi float64 }

func (a logAxis) pos(v float64) float64 {
	v = math.Min(math.Max(v, a.lo), a.hi)
	return (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
}

// progressPlot draws an attack's progress against the queries it sent, one
// line per run, x on a log scale from 1 query, ticks at 1, 10, 100, 1k, ...;
// a run's start (no query yet) is drawn at the left edge.
func progressPlot(title string, lines []series) string {
	maxQ := 1.0
	for _, s := range lines {
		for _, p := range s.points {
			maxQ = math.Max(maxQ, p.x)
		}
	}
	ax := logAxis{1, math.Max(10, math.Pow(10, math.Ceil(math.Log10(maxQ))))}
	px := func(q float64) float64 { return padL + innerW*ax.pos(math.Max(q, 1)) }
	py := func(f float64) float64 { return padT + innerH*(1-f) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="%s" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		progressPlotClass, plotW, plotH, plotW, plotH, html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="%d" y="16" %s font-weight="bold">%s</text>`, padL, defaultFont, html.EscapeString(title))
	frame(&b)
	for v := 1.0; v <= ax.hi; v *= 10 {
		x := px(v)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`, x, padT, x, padT+innerH)
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" %s text-anchor="middle">%s</text>`, x, padT+innerH+14, defaultFont, tickLabel(v))
	}
	for _, f := range []float64{0, 0.5, 1} {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" %s text-anchor="end">%.0f%%</text>`, padL-6, py(f)+4, defaultFont, 100*f)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" %s text-anchor="middle">queries sent (log scale)</text>`, padL+innerW/2, plotH-8, defaultFont)
	pixels := make([][]xy, len(lines))
	for i, s := range lines {
		for _, p := range s.points {
			pixels[i] = append(pixels[i], xy{px(p.x), py(p.y)})
		}
	}
	ly := padT + 10
	for i, s := range lines {
		under := coincidingBefore(pixels, i)
		raise := float64(coincideRaise * len(under))
		var pts []string
		for _, p := range pixels[i] {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.x, p.y-raise))
		}
		dash := dashFor(len(under))
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, s.colour, dash, strings.Join(pts, " "))
		if s.final != nil {
			if len(under) == 0 {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="%d" fill="%s"/>`, px(s.final.x), py(s.final.y), markerRadius+1, s.colour)
			} else {
				// A ring, wider for each line beneath, leaves the dots under it visible.
				fmt.Fprintf(&b, `<circle class="ring" cx="%.1f" cy="%.1f" r="%d" fill="none" stroke="%s" stroke-width="2"/>`,
					px(s.final.x), py(s.final.y)-raise, markerRadius+1+3*len(under), s.colour)
			}
		}
		note := ""
		if len(under) > 0 {
			var names []string
			for _, j := range under {
				names = append(names, lines[j].name)
			}
			note = "over " + strings.Join(names, " and ")
		}
		ly = legend(&b, ly, s.name, s.colour, dash, note)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// epsilonPoint is one mechanism in the claimed-against-audited plot.
type epsilonPoint struct {
	mechanism string
	claimed   float64 // per query; 0 claims nothing
	testClaim float64 // charged for the best test
	audited   float64 // demonstrated lower bound; 0 shows nothing
}

// epsilonPlot draws claimed and audited epsilon per mechanism on a log
// scale from 1e-11 to 100.
func epsilonPlot(points []epsilonPoint) string {
	ax := logAxis{1e-11, 1e2}
	w := padL + 70*len(points) + 40
	px := func(i int) float64 { return float64(padL + 35 + 70*i) }
	py := func(v float64) float64 { return padT + innerH*(1-ax.pos(v)) }
	var b strings.Builder
	title := "Claimed against audited epsilon per person (log scale)"
	fmt.Fprintf(&b, `<svg class="%s" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		claimedAuditedPlotClass, w, plotH+20, w, plotH+20, title)
	fmt.Fprintf(&b, `<text x="%d" y="16" %s font-weight="bold">%s</text>`, padL, defaultFont, title)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`, padL, padT, w-padL-20, innerH)
	for e := -11; e <= 2; e++ {
		y := py(math.Pow(10, float64(e)))
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>`, padL, y, w-20, y)
		if e%2 == 0 || e == -11 {
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" %s text-anchor="end">1e%d</text>`, padL-6, y+4, defaultFont, e)
		}
	}
	for i, p := range points {
		x := px(i)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" %s text-anchor="middle">%s</text>`, x, padT+innerH+14, defaultFont, html.EscapeString(p.mechanism))
		if p.claimed > 0 {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="5" fill="white" stroke="#1f77b4" stroke-width="2"><title>claimed %g per query</title></circle>`, x-8, py(p.claimed), p.claimed)
		} else {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" %s text-anchor="middle" fill="#1f77b4">claims</text><text x="%.1f" y="%d" %s text-anchor="middle" fill="#1f77b4">nothing</text>`, x, padT+12, defaultFont, x, padT+24, defaultFont)
		}
		if p.testClaim > 0 && p.testClaim != p.claimed {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="9" height="9" fill="white" stroke="#1f77b4" stroke-width="2"><title>claimed %g for the best test</title></rect>`, x-12.5, py(p.testClaim)-4.5, p.testClaim)
		}
		if p.audited > 0 {
			y := py(p.audited)
			fmt.Fprintf(&b, `<path d="M %.1f %.1f l 6 10 l -12 0 z" fill="#d62728"><title>audited at least %.2f</title></path>`, x+8, y-6, p.audited)
		} else {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" %s text-anchor="middle" fill="#d62728">none shown</text>`, x, padT+innerH-6, defaultFont)
		}
	}
	ly := plotH + 8
	fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="5" fill="white" stroke="#1f77b4" stroke-width="2"/><text x="%d" y="%d" %s>claimed per query</text>`, padL+5, ly, padL+14, ly+4, defaultFont)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="9" height="9" fill="white" stroke="#1f77b4" stroke-width="2"/><text x="%d" y="%d" %s>claimed for the best test</text>`, padL+125, ly-4, padL+139, ly+4, defaultFont)
	fmt.Fprintf(&b, `<path d="M %d %d l 6 10 l -12 0 z" fill="#d62728"/><text x="%d" y="%d" %s>audited (lower bound)</text>`, padL+290, ly-6, padL+300, ly+4, defaultFont)
	b.WriteString(`</svg>`)
	return b.String()
}

func frame(b *strings.Builder) {
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`, padL, padT, innerW, innerH)
}

// legend writes a plot's legend entry at y, with a second, smaller line
// for a note, and returns where the next entry goes.
func legend(b *strings.Builder, y int, name, colour, dash, note string) int {
	x := padL + innerW + 12
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"%s/><text class="legend" x="%d" y="%d" %s>%s</text>`,
		x, y, x+18, y, colour, dash, x+24, y+4, defaultFont, html.EscapeString(name))
	if note == "" {
		return y + 18
	}
	fmt.Fprintf(b, `<text class="legend-note" x="%d" y="%d" font-family="sans-serif" font-size="10" fill="#555">%s</text>`, x+24, y+16, html.EscapeString(note))
	return y + 30
}

// Lines that run within coincidePx of each other hide one another: the
// later is raised coincideRaise pixels for each line beneath it and
// dashed.
const (
	coincidePx    = 4
	coincideRaise = 3
)

// dashes tell the lines drawn over others apart, by how many lie beneath.
var dashes = []string{"7 4", "2 3", "9 3 2 3"}

// dashFor is the stroke-dasharray attribute of a line over n others.
func dashFor(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s"`, dashes[(n-1)%len(dashes)])
}

// coincidingBefore lists the lines drawn before line i that it would hide:
// every vertex of each lies within coincidePx of the other line (pixels).
func coincidingBefore(lines [][]xy, i int) []int {
	var under []int
	for j := 0; j < i; j++ {
		if within(lines[i], lines[j], coincidePx) && within(lines[j], lines[i], coincidePx) {
			under = append(under, j)
		}
	}
	return under
}

// within reports whether every vertex of a lies within tol of the polyline b.
func within(a, b []xy, tol float64) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	for _, p := range a {
		near := false
		for k := range b {
			q := b[max(k-1, 0)]
			if segmentDistance(p, q, b[k]) <= tol {
				near = true
				break
			}
		}
		if !near {
			return false
		}
	}
	return true
}

// segmentDistance is the distance from p to the segment from a to b.
func segmentDistance(p, a, b xy) float64 {
	dx, dy := b.x-a.x, b.y-a.y
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = math.Min(1, math.Max(0, ((p.x-a.x)*dx+(p.y-a.y)*dy)/l))
	}
	return math.Hypot(p.x-a.x-t*dx, p.y-a.y-t*dy)
}

func tickLabel(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}

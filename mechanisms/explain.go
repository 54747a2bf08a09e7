package mechanisms

import (
	"fmt"
	"math"

	"github.com/google/differential-privacy/go/v3/noise"
)

// What a mechanism can say about a request before the data is read, for
// EXPLAIN, and about an answer from its noise parameters alone, for the
// intervals of SET countwall.confidence.

// ExplainLine is one line of EXPLAIN's plan: a label and its text.
type ExplainLine struct {
	Label string
	Text  string
}

// Explainer is implemented by mechanisms that can say how a priced request
// will be answered: the bounds and sensitivity that apply and the error to
// expect. It reads no data and states nothing the mechanism keeps hidden
// (parameters under publish_parameters: false).
type Explainer interface {
	Explain(req *Request) []ExplainLine
}

// Intervaler is implemented by mechanisms whose noise is known from its
// parameters: Interval is the range around answer a that holds the true
// count with probability at least confidence, computed from the noise
// parameters only, never from the data. ok is false when the mechanism
// states none for that answer.
type Intervaler interface {
	Interval(req *Request, a Answer, confidence float64) (lo, hi float64, ok bool)
}

// Explain is m's explanation of req, or nil.
func Explain(m Mechanism, req *Request) []ExplainLine {
	if e, ok := m.(Explainer); ok {
		return e.Explain(req)
	}
	return nil
}

// Interval is m's interval for answer a of req, if it states one.
func Interval(m Mechanism, req *Request, a Answer, confidence float64) (lo, hi float64, ok bool) {
	if i, yes := m.(Intervaler); yes {
		return i.Interval(req, a, confidence)
	}
	return 0, 0, false
}

// ExplainConfidence is the confidence of EXPLAIN's expected error.
const ExplainConfidence = 0.95

// library is the library's noise whose confidence intervals describe the
// mechanism's answers.
func (m *dpCount) library() noise.Noise {
	if m.withDelta {
		return noise.Gaussian()
	}
	return noise.Laplace()
}

// noiseInterval is the library's confidence interval around noisy for the
// counts' share of plan p.
func (m *dpCount) noiseInterval(p *dpPlan, noisy int64, confidence float64) (noise.ConfidenceInterval, error) {
	delta := 0.0 // Laplace noise takes no delta
	if m.withDelta {
		delta = p.countDelta
	}
	return m.library().ComputeConfidenceIntervalInt64(noisy, p.l0, p.lInf, p.countEpsilon, delta, 1-confidence)
}

// Explain states laplace's and gaussian's bounds, sensitivity, noise, the
// 95% interval of the noise (the library's), and the partition selection.
func (m *dpCount) Explain(req *Request) []ExplainLine {
	p, err := m.plan(req, req.Bounds)
	if err != nil {
		return nil
	}
	lines := []ExplainLine{{"Contribution bounds", fmt.Sprintf("%s; G = %d cell(s) per person (max_groups_per_unit)", m.rowsBoundText(req, p.lInf), p.l0)}}
	switch {
	case p.sums != nil:
		lines = append(lines, m.sumExplain(req, &p)...)
	case m.withDelta:
		sigma, _ := GaussianSigma(p.l0, p.lInf, p.countEpsilon, p.countDelta)
		lines = append(lines,
			ExplainLine{"Sensitivity", fmt.Sprintf("L2 = sqrt(G)*C = %.4g", math.Sqrt(float64(p.l0))*float64(p.lInf))},
			ExplainLine{"Noise", fmt.Sprintf("Gaussian, sigma %.4g (epsilon %g, delta %g for the counts), rounded to an integer", sigma, p.countEpsilon, p.countDelta)})
	default:
		lines = append(lines,
			ExplainLine{"Sensitivity", fmt.Sprintf("L1 = G*C = %d", p.l0*p.lInf)},
			ExplainLine{"Noise", fmt.Sprintf("Laplace, scale %.4g (epsilon %g for the counts), rounded to an integer", float64(p.l0*p.lInf)/p.countEpsilon, p.countEpsilon)})
	}
	if ci, err := m.noiseInterval(&p, 0, ExplainConfidence); err == nil && p.sums == nil {
		text := fmt.Sprintf("95%% of counts within [%g, %g] of the truth (the library's confidence interval); below 0 published as 0", ci.LowerBound, ci.UpperBound)
		if req.Query.Threshold != nil {
			text = fmt.Sprintf("the 0/1 answer compares the noisy count with %d; 95%% of noisy counts are within [%g, %g] of the truth", req.Query.Threshold.Bound, ci.LowerBound, ci.UpperBound)
		}
		lines = append(lines, ExplainLine{"Expected error", text})
	}
	if p.selects {
		lines = append(lines, ExplainLine{"Partition selection", m.selectionText(&p)})
	}
	return lines
}

// rowsBoundText states C, the rows of a person a cell counts, where it
// comes from and what it leaves out: on a table of several rows a person,
// a COUNT(*) under the default of 1 counts persons, not rows.
func (m *dpCount) rowsBoundText(req *Request, c int64) string {
	from := "max_rows_per_unit, the default"
	switch {
	case m.bounds.MaxRowsPerUnit > 0:
		from = "the mechanism's max_rows_per_unit"
	case req.Table != nil && req.Table.Bounds.MaxRowsPerUnit > 0:
		from = "the table's max_rows_per_unit"
	}
	if c == 1 {
		return fmt.Sprintf("C = 1 row of a person per cell (%s): a person's further rows are not counted, so COUNT(*) counts persons, not rows", from)
	}
	return fmt.Sprintf("C = %d rows of a person per cell (%s): a person's rows beyond %d are not counted", c, from, c)
}

// selectionText states the selection of a plan: its share, when a group is
// certain to be released, and what one person alone in a group risks.
func (m *dpCount) selectionText(p *dpPlan) string {
	text := fmt.Sprintf("dpagg.PreAggSelectPartition on each group's persons, epsilon %g, delta %g, l0 = %d", p.selectEpsilon, p.selectDelta, p.l0)
	if hard, err := SelectionHardThreshold(p.l0, p.selectEpsilon, p.selectDelta); err == nil && hard > 0 {
		text += fmt.Sprintf("; always released from %d persons", hard)
	}
	alone := p.selectDelta / float64(p.l0)
	if p.l0 > 3 {
		alone = p.selectDelta / 2
	}
	return text + fmt.Sprintf("; a group of one person appears with probability <= %.3g", alone)
}

// Interval is the library's confidence interval of the counts' noise
// around a, from below at 0 (a count is never negative; the answer was
// clamped there). A threshold answer has none.
func (m *dpCount) Interval(req *Request, a Answer, confidence float64) (lo, hi float64, ok bool) {
	if req.Query.Threshold != nil || a.Dropped || a.IsFloat {
		return 0, 0, false
	}
	bounds := req.Bounds
	if req.Result != nil {
		bounds = req.Result.Bounds
	}
	p, err := m.plan(req, bounds)
	if err != nil {
		return 0, 0, false
	}
	ci, err := m.noiseInterval(&p, a.Int, confidence)
	if err != nil {
		return 0, 0, false
	}
	return max(ci.LowerBound, 0), ci.UpperBound, true
}

// The other mechanisms: their documented ranges.

func (exact) Explain(*Request) []ExplainLine {
	return []ExplainLine{{"Noise", "none: the true count"}, {"Expected error", "0"}}
}

func (exact) Interval(_ *Request, a Answer, _ float64) (float64, float64, bool) {
	return float64(a.Int), float64(a.Int), !a.IsFloat
}

func (m *suppress) Explain(req *Request) []ExplainLine {
	lines := []ExplainLine{{"Noise", fmt.Sprintf("none; counts of %d or less are withheld", m.threshold)},
		{"Expected error", fmt.Sprintf("0 for a published count; a withheld count is between 0 and %d", m.threshold)}}
	if req != nil && req.Query != nil && req.Query.HasSums() {
		lines = append(lines, ExplainLine{"Magnitude rules", m.rules.text() + "; a cell that breaks one is withheld whole (count and sums NULL)"},
			ExplainLine{"Secondary suppression", m.rules.secondaryText()})
	}
	return lines
}

func (m *suppress) Interval(_ *Request, a Answer, _ float64) (float64, float64, bool) {
	if a.Suppressed {
		return 0, float64(m.threshold), true
	}
	return float64(a.Int), float64(a.Int), true
}

func (m *bounded) Explain(req *Request) []ExplainLine {
	sums := req != nil && req.Query != nil && req.Query.HasSums()
	if !m.publish {
		lines := []ExplainLine{{"Noise", "fresh bounded integer noise on every answer"}, {"Expected error", "within the range, which is not published (publish_parameters: false)"}}
		if sums {
			lines = append(lines, ExplainLine{"Sums", "fresh bounded noise scaled to one value's largest effect on every sum; values clamped to the column's bounds"})
		}
		return lines
	}
	lines := []ExplainLine{{"Noise", fmt.Sprintf("fresh uniform integer noise on [-%d, %d], answers below 0 published as 0", m.r, m.r)},
		{"Expected error", rangeError(m.r, m.suppressAt)}}
	if sums {
		lines = append(lines, ExplainLine{"Sums", fmt.Sprintf("fresh uniform noise on [-%d*B, %d*B] on every sum, B = max(|min|, |max|) of the column's bounds; "+
			"values clamped to them; the values counted for AVG noised as a count; asking again averages the noise away", m.r, m.r)})
	}
	return lines
}

// Interval is the documented range: [a-r, a+r] from 0, or [0, s] for a
// suppressed cell; it always holds the truth. None when the range is not
// published.
func (m *bounded) Interval(_ *Request, a Answer, _ float64) (float64, float64, bool) {
	return publishedRange(m.publish, a, m.r, m.suppressAt)
}

func (m *cellKey) Explain(req *Request) []ExplainLine {
	sums := req != nil && req.Query != nil && req.Query.HasSums()
	if !m.publish {
		lines := []ExplainLine{{"Noise", "sticky noise from a perturbation table, keyed by the contributors"}, {"Expected error", "within the table's range, which is not published (publish_parameters: false)"}}
		if sums {
			lines = append(lines, ExplainLine{"Sums", "sticky perturbation of each sum's largest contributions per person, keyed by the contributors; " +
				"values clamped to the column's bounds; the parameters are not published (publish_parameters: false)"})
		}
		return lines
	}
	lines := []ExplainLine{{"Noise", fmt.Sprintf("sticky noise from perturbation table %s, keyed by the contributors; zeros stay zero", m.table.name)},
		{"Expected error", rangeError(m.table.maxV, m.suppressAt)}}
	if sums {
		lines = append(lines, ExplainLine{"Sums", m.magnitudeText()})
	}
	return lines
}

// Interval is the table's range around a, or [0, s] for a suppressed cell.
func (m *cellKey) Interval(_ *Request, a Answer, _ float64) (float64, float64, bool) {
	return publishedRange(m.publish, a, m.table.maxV, m.suppressAt)
}

// rangeError states the error of noise bounded by ±d, with suppression at
// suppressAt (-1: none), whose 0 for a small count the range alone does not
// cover.
func rangeError(d, suppressAt int64) string {
	text := fmt.Sprintf("always within [-%d, %d] of the truth", d, d)
	if suppressAt >= 0 {
		text += fmt.Sprintf(", except that a count of %d or less is published as 0", suppressAt)
	}
	return text
}

// publishedRange is the interval of noise bounded by ±d, when published,
// computed from the published count alone: a 0 is either a suppressed
// count (at most suppressAt) or a count of at most d that the noise pulled
// down to 0, and which of the two it was must not show in the interval (it
// depends on the true count, not on what was published). A positive count
// was not suppressed, so its truth lies above suppressAt too.
func publishedRange(publish bool, a Answer, d, suppressAt int64) (float64, float64, bool) {
	switch {
	case !publish || a.IsFloat:
		return 0, 0, false
	case a.Suppressed || a.Int <= 0:
		return 0, float64(max(d, suppressAt)), true
	}
	return float64(max(a.Int-d, suppressAt+1, 0)), float64(a.Int + d), true
}

func (m *layered) Explain(req *Request) []ExplainLine {
	layers := len(req.Query.GroupBy) + 1
	lines := []ExplainLine{{"Noise", fmt.Sprintf("sticky Gaussian layers of SD %g: one per condition and group column (%d or more here) and one per set of contributors; low counts withheld", m.sd, layers)},
		{"Expected error", "about ±1.96 SD times the square root of the number of layers; the same question always gets the same answer, so asking again does not average it away"}}
	if req.Query.HasSums() {
		lines = append(lines, ExplainLine{"Sums", fmt.Sprintf("Diffix's sum: values clamped to the column's bounds; each cell's 1 or 2 largest contributions per person flattened to the average of the next 3 or 4, "+
			"and the same sticky layers, seeded apart, with SD %g times that average", m.sd)})
	}
	return lines
}

func (m *idp) Explain(*Request) []ExplainLine {
	return []ExplainLine{{"Noise", fmt.Sprintf("Laplace of scale (k-local sensitivity) / epsilon*, k = %d; the sensitivity depends on the true count and the table size", m.k)},
		{"Expected error", "not known before the data is read: 0 when the sensitivity is 0"}}
}

func (*bdp) Explain(*Request) []ExplainLine {
	return []ExplainLine{{"Noise", "Laplace of scale (bootstrap sensitivity) / epsilon*; the sensitivity depends on which records satisfy the condition"},
		{"Expected error", "not known before the data is read: 0 when the sensitivity is 0"}}
}

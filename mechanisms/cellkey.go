package mechanisms

import (
	"context"
	"fmt"
	"math"
	"strings"

	"countwall/ir"
	"countwall/pgerror"
)

func init() { Register("cellkey", newCellKey) }

const (
	cellKeyDefaultD = 2
	// cellKeyDefaultSuppressAt follows the ABS TableBuilder API, which
	// suppresses counts <= 4 with D = 2 (Asghar-Kaafar 5.1).
	cellKeyDefaultSuppressAt = 4
	cellKeyTableUniform      = "uniform"
	cellKeyTableABSExample   = "abs_example"
)

// cellKey is the cell key method of the ABS TableBuilder (Asghar-Kaafar 3
// and 5.1). Every contributor has a uint32 record key; a cell's key is the
// sum of its contributors' keys mod 2^32, so the same set of contributors
// always has the same cell key whatever SQL selected them. The cell key's
// position key/2^32 in [0, 1) picks the noise from the perturbation table row
// of the cell's true count. The noise is therefore sticky: asking again, or
// asking differently for the same people, returns the same answer, which
// defeats averaging of repeated queries but not averaging over different
// sets of contributors.
//
// True zero cells stay 0 (they have no contributors, hence no key), and true
// counts <= suppress_at are published as 0 and marked suppressed. With
// suppression on, zero cells are marked suppressed too, so the mark does not
// reveal whether a withheld cell was empty.
type cellKey struct {
	table      *ptable
	suppressAt int64 // -1: no suppression
	publish    bool
	// The magnitude perturbation of sums (cellkey_sums.go).
	magnitude *magnitudeTable
	topK      int
	percent   float64
}

func newCellKey(p Params, _ Env) (Mechanism, error) {
	params := struct {
		Ptable     string  `mapstructure:"ptable"`
		D          *int64  `mapstructure:"D"` // nil: not given
		SuppressAt int64   `mapstructure:"suppress_at"`
		Publish    bool    `mapstructure:"publish_parameters"`
		TopK       int64   `mapstructure:"magnitude_top_k"`
		Percent    float64 `mapstructure:"magnitude_percent"`
		MagD       float64 `mapstructure:"magnitude_D"`
		MagV       float64 `mapstructure:"magnitude_V"`
		MagMu      float64 `mapstructure:"magnitude_mu"`
	}{Ptable: cellKeyTableUniform, SuppressAt: cellKeyDefaultSuppressAt, TopK: cellKeyDefaultTopK,
		Percent: cellKeyDefaultPercent, MagD: cellKeyDefaultMagD, MagV: cellKeyDefaultMagV}
	if err := decodeParams(p, &params); err != nil {
		return nil, err
	}
	source, err := nonEmptyParam("ptable", params.Ptable)
	if err != nil {
		return nil, err
	}
	var table *ptable
	switch {
	case strings.EqualFold(source, cellKeyTableUniform):
		d := int64(cellKeyDefaultD)
		if params.D != nil {
			d = *params.D
		}
		if err := intParamIn("D", d, 1, uniformMaxD); err != nil {
			return nil, err
		}
		if table, err = uniformPtable(d); err != nil {
			return nil, paramErrorf("D", "%v", err)
		}
	default:
		// D describes the uniform table only; a file or the example table
		// carries its own noise range, and silently ignoring D would
		// mislead whoever set it.
		if params.D != nil {
			return nil, paramErrorf("D", "applies only to ptable %q; the %q table has its own noise range", cellKeyTableUniform, source)
		}
		if strings.EqualFold(source, cellKeyTableABSExample) {
			table = absExamplePtable()
		} else if table, err = loadPtableCSV(source); err != nil {
			return nil, paramErrorf("ptable", "must be %q, %q or the path of a CSV perturbation table: %w",
				cellKeyTableUniform, cellKeyTableABSExample, err)
		}
	}
	if err := intParamIn("suppress_at", params.SuppressAt, -1, math.MaxInt64); err != nil {
		return nil, err
	}
	m := &cellKey{table: table, suppressAt: params.SuppressAt, publish: params.Publish, topK: int(params.TopK), percent: params.Percent}
	if err := m.magnitudeParams(params.TopK, params.Percent, params.MagD, params.MagV, params.MagMu); err != nil {
		return nil, err
	}
	return m, nil
}

func (*cellKey) Name() string { return "cellkey" }

// Needs asks for the contributor key; the count is always there. A query
// with sums also needs every unit's contribution (the largest are perturbed).
func (*cellKey) Needs() ir.Needs { return ir.Needs{Key: true, Contributions: true} }

// AnswersSums: sums are perturbed by their largest contributions.
func (*cellKey) AnswersSums() bool { return true }

// ClampsSums: sums are of values clamped to the columns' bounds.
func (*cellKey) ClampsSums() bool { return true }

// Price refuses a sum over a column without bounds; it charges nothing.
func (*cellKey) Price(req *Request) (Charge, error) { return Charge{}, checkSumBounds(req) }

// magnitudeParams checks and sets the magnitude perturbation's parameters.
func (m *cellKey) magnitudeParams(topK int64, percent, d, v, mu float64) error {
	if err := intParamIn("magnitude_top_k", topK, 1, 10); err != nil {
		return err
	}
	if err := floatParamIn("magnitude_percent", percent, 0, 100); err != nil {
		return err
	}
	if err := floatParamIn("magnitude_D", d, 0.01, 100); err != nil {
		return err
	}
	if err := floatParamIn("magnitude_mu", mu, 0, 100); err != nil {
		return err
	}
	t, err := newMagnitudeTable(d, v, mu)
	if err != nil {
		return paramErrorf("magnitude_V", "%v", err)
	}
	m.magnitude = t
	return nil
}

func (m *cellKey) Describe() string {
	claim := "cellkey: consistent perturbation from a perturbation table: the same contributors always get the same answer, " +
		"zeros stay zero and small counts are published as 0; offers no formal privacy guarantee"
	if !m.publish {
		return claim
	}
	params := fmt.Sprintf(" (table %s, noise within +-%d", m.table.name, m.table.maxV)
	if m.suppressAt >= 0 {
		params += fmt.Sprintf(", counts <= %d published as 0", m.suppressAt)
	}
	return claim + params + ")"
}

func (m *cellKey) Answer(_ context.Context, req *Request) ([]Answer, Charge, error) {
	cells, err := requestCells(req)
	if err != nil {
		return nil, Charge{}, err
	}
	answers := make([]Answer, len(cells))
	for i, c := range cells {
		switch {
		case c.Count <= m.suppressAt:
			// Zero cells land here too (0 <= s): they publish 0 either
			// way, and marking them alike keeps the suppressed mark from
			// telling an empty cell from a small one.
			answers[i] = Answer{Suppressed: true}
		case c.Count <= 0:
			answers[i] = Answer{Int: 0} // zeros stay zero
		default:
			v := m.table.noise(c.Count, cellKeyPosition(c.Key))
			if v < 0 && c.Count+v < 0 {
				// The tables are validated so that this cannot happen.
				return nil, Charge{}, pgerror.Errorf(pgerror.InternalError,
					"cellkey: perturbation table %s would publish a negative count", m.table.name)
			}
			// c.Count > suppressAt here: a 0 is the noise's, marked as a
			// withheld one when the mechanism withholds (suppressAt >= 0).
			answers[i] = Answer{Int: addNoiseClampedAtZero(c.Count, v)}
			if m.suppressAt >= 0 {
				answers[i] = withheldIfZero(answers[i].Int)
			}
		}
	}
	if req.Query.HasSums() {
		return m.answerSums(req, cells, answers), Charge{}, nil
	}
	return thresholdAnswers(req.Query, answers), Charge{}, nil
}

// cellKeyPosition maps a cell key to its position key/2^32 in [0, 1); the
// division is exact in float64.
func cellKeyPosition(key uint32) float64 {
	return float64(key) / (1 << 32)
}

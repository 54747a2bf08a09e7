package mechanisms

import (
	"context"
	"fmt"
	"math"

	"countwall/ir"
)

func init() { Register("suppress", newSuppress) }

// Suppression defaults. Counts of 1 to 10 are withheld, the minimum cell
// size many data custodians use (for example the US CMS cell size
// suppression policy); the ABS TableBuilder's <= 4 is a noisier regime and is
// the cellkey mechanism's default instead.
const (
	suppressDefaultThreshold = 10
	suppressModeZero         = "zero"
	suppressModeDrop         = "drop"
)

// suppress withholds small counts (Asghar-Kaafar 2.2): a true count <= s is
// published as 0, or left out of the output in drop mode, and every other
// count is published exactly. Exact large counts make it open to differencing.
type suppress struct {
	threshold int64
	drop      bool
	rules     magnitudeRules // for queries with sums (suppress_sums.go)
}

func newSuppress(p Params, _ Env) (Mechanism, error) {
	params := struct {
		Threshold  int64   `mapstructure:"threshold"`
		Mode       string  `mapstructure:"mode"`
		DominanceN int64   `mapstructure:"dominance_n"`
		DominanceK float64 `mapstructure:"dominance_k"`
		PPercent   float64 `mapstructure:"p_percent"`
		Secondary  bool    `mapstructure:"secondary_suppression"`
	}{Threshold: suppressDefaultThreshold, Mode: suppressModeZero, DominanceN: suppressDefaultDominanceN,
		DominanceK: suppressDefaultDominanceK, PPercent: suppressDefaultPPercent, Secondary: true}
	if err := decodeParams(p, &params); err != nil {
		return nil, err
	}
	if err := intParamIn("threshold", params.Threshold, 0, math.MaxInt64); err != nil {
		return nil, err
	}
	if err := intParamIn("dominance_n", params.DominanceN, 1, 100); err != nil {
		return nil, err
	}
	if err := floatParamIn("dominance_k", params.DominanceK, 0, 100); err != nil {
		return nil, err
	}
	if err := floatParamIn("p_percent", params.PPercent, 0, 1000); err != nil {
		return nil, err
	}
	mode, err := choiceParam("mode", params.Mode, suppressModeZero, suppressModeDrop)
	if err != nil {
		return nil, err
	}
	rules := magnitudeRules{n: int(params.DominanceN), k: params.DominanceK, p: params.PPercent, secondary: params.Secondary}
	return &suppress{threshold: params.Threshold, drop: mode == suppressModeDrop, rules: rules}, nil
}

func (*suppress) Name() string { return "suppress" }

// Needs asks, for a query with sums, for every unit's contribution to each
// cell (the magnitude rules read them all); a COUNT query needs nothing.
func (*suppress) Needs() ir.Needs { return ir.Needs{Contributions: true} }

// AnswersSums: the magnitude rules answer SUM and AVG.
func (*suppress) AnswersSums() bool { return true }

// ClampsSums: sums are of values clamped to the columns' bounds.
func (*suppress) ClampsSums() bool { return true }

// Price refuses a sum over a column without bounds; it charges nothing.
func (*suppress) Price(req *Request) (Charge, error) { return Charge{}, checkSumBounds(req) }

// DropsLowCounts is true in drop mode.
func (m *suppress) DropsLowCounts() bool { return m.drop }

func (m *suppress) Describe() string {
	what := "published as 0"
	if m.drop {
		what = "left out of grouped results"
	}
	return fmt.Sprintf("suppress: counts <= %d are %s, other counts are exact; sums withheld by %s; "+
		"differencing two queries can recover a withheld count; offers no formal privacy guarantee", m.threshold, what, m.rules.text())
}

// Answer withholds every cell whose true count is <= s; a zero cell is
// withheld too (0 <= s). In drop mode withheld cells of a GROUP BY query are
// dropped; the single cell of a query without GROUP BY is published as a
// suppressed 0 instead, because an aggregate without GROUP BY always returns
// exactly one row and clients rely on that.
func (m *suppress) Answer(_ context.Context, req *Request) ([]Answer, Charge, error) {
	cells, err := requestCells(req)
	if err != nil {
		return nil, Charge{}, err
	}
	if req.Query.HasSums() {
		return m.answerSums(req.Query, cells), Charge{}, nil
	}
	drop := m.drop && len(req.Query.GroupBy) > 0
	answers := make([]Answer, len(cells))
	for i, c := range cells {
		switch {
		case c.Count > m.threshold:
			answers[i] = Answer{Int: c.Count}
		case drop:
			answers[i] = Answer{Dropped: true}
		default:
			answers[i] = Answer{Suppressed: true}
		}
	}
	return thresholdAnswers(req.Query, answers), Charge{}, nil
}

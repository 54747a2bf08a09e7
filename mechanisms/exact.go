package mechanisms

import (
	"context"

	"countwall/ir"
)

func init() { Register("exact", newExact) }

// exact publishes true counts. It protects nothing; it is the baseline the
// attacks are scored against.
type exact struct{}

func newExact(p Params, _ Env) (Mechanism, error) {
	if err := decodeParams(p, &struct{}{}); err != nil {
		return nil, err
	}
	return exact{}, nil
}

func (exact) Name() string { return "exact" }

// Needs is empty: the count is always computed, and nothing else is used.
func (exact) Needs() ir.Needs { return ir.Needs{} }

// AnswersSums: exact publishes true sums as PostgreSQL computes them.
func (exact) AnswersSums() bool { return true }

func (exact) Describe() string {
	return "exact: true counts; offers no protection"
}

func (exact) Answer(_ context.Context, req *Request) ([]Answer, Charge, error) {
	cells, err := requestCells(req)
	if err != nil {
		return nil, Charge{}, err
	}
	answers := make([]Answer, len(cells))
	for i, c := range cells {
		answers[i] = Answer{Int: c.Count}
		if c.Sums != nil {
			answers[i].Sums = &Sums{Columns: c.Sums}
		}
	}
	return thresholdAnswers(req.Query, answers), Charge{}, nil
}

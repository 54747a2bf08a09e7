package attacks

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// SumAveraging is averaging on a sum: a mechanism that draws fresh noise
// for every answer (bounded) gives the same SUM a new error each time, and
// the mean of n answers has a standard error of sd/sqrt(n). It stops once
// three standard errors are below half the grain of the column's values
// (the sum, rounded to the grain, is then the truth), or at --limit
// answers: the noise of a sum scales with the column's bound, so the
// number of queries it needs grows with (bound/grain)^2.
var SumAveraging = &Attack{
	Name:    "sum-averaging",
	Against: "bounded",
	Source:  "Asghar-Kaafar 2.2, on sums",
	Summary: "a sum behind fresh noise as the mean of repeated answers, rounded to the values' grain",
	Run:     runSumAveraging,
	Score:   scoreSum,
	Demo: func() Options {
		// The income of one suburb's managers: 33 people, one SUM asked
		// until its mean is within 50 of the truth, or 500 times.
		return Options{
			Target: Target{Table: "people", Where: "suburb = 'suburb_0005' AND occupation = 'managers'", Sum: "income"},
			Params: &SumAveragingParams{SumParams: SumParams{Grain: 100}, Limit: 500},
		}
	},
	Flags: func(f *pflag.FlagSet, o *Options) {
		p := o.Params.(*SumAveragingParams)
		sumFlags(f, o, &p.SumParams)
		f.IntVar(&p.Limit, "limit", p.Limit, "answers to average at most")
	},
}

func init() { register(SumAveraging) }

// SumAveragingParams are sum-averaging's own options.
type SumAveragingParams struct {
	SumParams
	Limit int
}

func runSumAveraging(ctx context.Context, q Querier, o Options) (*Result, error) {
	p, ok := o.Params.(*SumAveragingParams)
	if !ok || p == nil {
		return nil, errors.New("sum-averaging: no parameters")
	}
	if err := sumTarget("sum-averaging", o); err != nil {
		return nil, err
	}
	if p.Limit < 1 {
		return nil, fmt.Errorf("--limit %d: want at least 1", p.Limit)
	}
	m, err := averageAnswers(ctx, q, o.Target.querySQL(), p.grain()/2, p.Limit)
	if err != nil {
		if r := stoppedResult(err, 0); r != nil {
			return r, nil
		}
		return nil, err
	}
	return &Result{Estimate: m.mean, Recovered: p.round(m.mean), Note: m.note,
		Details: map[string]any{"answers": m.n, "standard_error": m.stdErr, "withheld": m.withheld}}, nil
}

package attacks

import (
	"context"

	"github.com/spf13/pflag"
)

// SumSplitAveraging is split-averaging on a sum (REFERENCES.md: [CNSU20]
// part 2, [PGD]): sticky noise gives the same SUM the same error, so the
// attacker asks SUM(col) WHERE C AND X_i and WHERE C AND NOT X_i for many
// splits X_i, whose two answers add up to the sum over C plus noise seeded
// by X_i, and averages; rewrites of C show whether the firewall's
// normalisation gives C's own layers the same seed. Under layered the sum
// noise is scaled by the largest contributions, so the error that stays is
// C's own layers, counted twice; under fresh noise everything averages.
var SumSplitAveraging = &Attack{
	Name:    "sum-split-averaging",
	Against: "layered",
	Source:  "Diffix literature; pg_diffix, on sums",
	Summary: "a sum behind sticky noise as the mean of SUM over (C AND X_i) + (C AND NOT X_i) for many splits X_i, with C rewritten",
	Script:  splitScript,
	Run: func(ctx context.Context, q Querier, o Options) (*Result, error) {
		if err := sumTarget("sum-split-averaging", o); err != nil {
			return nil, err
		}
		res, err := runSplitAveraging(ctx, q, o)
		if r := stoppedResult(err, 0); err != nil && r != nil {
			return r, nil
		}
		return res, err
	},
	Score: func(ctx context.Context, truthPath string, o Options, r *Result) error {
		if err := scoreSplitAveraging(ctx, truthPath, o, r); err != nil {
			return err
		}
		return scoreSum(ctx, truthPath, o, r)
	},
	Demo: func() Options {
		// The income of one suburb's managers (33 people), split by age,
		// written two ways: 2 x 25 splits x 2 halves = 100 queries.
		return Options{
			Target: Target{Table: "people", Where: "suburb = 'suburb_0005' AND occupation = 'managers'", Sum: "income"},
			Params: &SplitParams{SumParams: SumParams{Grain: 100}, Splits: 25, SplitColumn: "age", SplitLo: 25, SplitStep: 1, Rewrites: []string{
				"occupation IN ('managers') AND suburb IN ('suburb_0005')",
			}},
		}
	},
	Flags: func(f *pflag.FlagSet, o *Options) {
		SplitAveraging.Flags(f, o)
		sumFlags(f, o, &o.Params.(*SplitParams).SumParams)
	},
}

func init() { register(SumSplitAveraging) }

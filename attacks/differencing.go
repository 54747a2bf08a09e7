package attacks

import (
	"context"
	"fmt"
	"math"
)

// Differencing recovers a count a suppression mechanism withholds: the
// table total and the count of the target's complement are both large, so
// both are published, and their difference is the withheld count
// (Asghar and Kaafar, section 2.2).
var Differencing = &Attack{
	Name:    "differencing",
	Against: "suppress",
	Source:  "Asghar-Kaafar 2.2",
	Summary: "a suppressed count as the total minus the count of its complement",
	Script:  differencingScript,
	Run: func(ctx context.Context, q Querier, o Options) (*Result, error) {
		if o.Target.Where == "" {
			return nil, fmt.Errorf("differencing needs a target predicate (--where)")
		}
		script := differencingScript(o)
		total, err := Count(ctx, q, script[0])
		if err != nil {
			return nil, fmt.Errorf("asking the total: %w", err)
		}
		rest, err := Count(ctx, q, script[1])
		if err != nil {
			return nil, fmt.Errorf("asking the complement: %w", err)
		}
		est := math.Max(0, total-rest)
		return &Result{Estimate: est, Recovered: int64(math.Round(est))}, nil
	},
	Demo: func() Options {
		// 1..10 people in a 20,000-row table: a count suppress withholds.
		return Options{Target: Target{Table: "people", Where: "suburb = 'suburb_0015' AND age > 60"}}
	},
}

func init() { register(Differencing) }

func differencingScript(o Options) []string {
	return []string{
		Target{Table: o.Target.Table}.querySQL(),
		Target{Table: o.Target.Table, Where: "NOT (" + o.Target.Where + ")"}.querySQL(),
	}
}

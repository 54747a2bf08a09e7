package attacks

import (
	"context"
	"fmt"
	"math"
)

// Averaging recovers a count behind fresh noise by asking it again and
// again: the mean of n answers has a standard error of sd/sqrt(n), so it
// stops once three standard errors are below one half, where rounding the
// mean gives the count (Asghar and Kaafar, section 2.2).
var Averaging = &Attack{
	Name:    "averaging",
	Against: "bounded",
	Source:  "Asghar-Kaafar 2.2",
	Summary: "a count behind fresh noise as the rounded mean of repeated answers",
	Run: func(ctx context.Context, q Querier, o Options) (*Result, error) {
		// A bounded run settles within hundreds of answers; the cap stops one
		// against a mechanism whose noise never averages below 1/2.
		const minQueries, limit = 30, 20000
		sql := o.Target.countSQL()
		var n int
		var mean, m2 float64 // Welford's running mean and squared deviations
		var note string
		for n < limit {
			v, err := Count(ctx, q, sql)
			if err != nil {
				if n == 0 {
					return nil, fmt.Errorf("asking the target: %w", err)
				}
				note = fmt.Sprintf("stopped after %d answers: %v", n, err)
				break
			}
			n++
			d := v - mean
			mean += d / float64(n)
			m2 += d * (v - mean)
			if n >= minQueries && 3*math.Sqrt(m2/float64(n-1)/float64(n)) < 0.5 {
				break
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("no answer to average")
		}
		return &Result{Estimate: mean, Recovered: int64(math.Round(math.Max(0, mean))), Note: note}, nil
	},
	Demo: func() Options {
		return Options{Target: Target{Table: "people", Where: "sex = 'F' AND age BETWEEN 40 AND 44"}}
	},
}

func init() { register(Averaging) }

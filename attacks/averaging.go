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
		m, err := averageAnswers(ctx, q, o.Target.querySQL(), 0.5, 20000)
		if err != nil {
			return nil, err
		}
		return &Result{Estimate: m.mean, Recovered: int64(math.Round(math.Max(0, m.mean))), Note: m.note}, nil
	},
	Demo: func() Options {
		return Options{Target: Target{Table: "people", Where: "sex = 'F' AND age BETWEEN 40 AND 44"}}
	},
}

func init() { register(Averaging) }

// averaged is what repeating one query gave: the mean of n answers, their
// standard error, and why the repetition stopped early, if it did.
type averaged struct {
	mean, stdErr float64
	n            int
	note         string
	withheld     int // answers the firewall sent as NULL, read as 0
}

// minAnswers is how many answers are averaged before the standard error is
// trusted to stop the repetition.
const minAnswers = 30

// averageAnswers asks sql until three standard errors of the mean are below
// tolerance, or limit answers; a refusal after the first answer ends it
// with the mean so far, one at the first is returned as the error.
func averageAnswers(ctx context.Context, q Querier, sql string, tolerance float64, limit int) (averaged, error) {
	var a averaged
	var m2 float64 // Welford's squared deviations
	for a.n < limit {
		v, withheld, err := SumAnswer(ctx, q, sql)
		if err != nil {
			if a.n == 0 {
				return a, fmt.Errorf("asking the target: %w", err)
			}
			a.note = fmt.Sprintf("stopped after %d answers: %v", a.n, err)
			break
		}
		if withheld {
			a.withheld++
		}
		a.n++
		d := v - a.mean
		a.mean += d / float64(a.n)
		m2 += d * (v - a.mean)
		if a.n > 1 {
			a.stdErr = math.Sqrt(m2 / float64(a.n-1) / float64(a.n))
		}
		if a.n >= minAnswers && 3*a.stdErr < tolerance {
			break
		}
	}
	if a.n == 0 {
		return a, fmt.Errorf("no answer to average")
	}
	return a, nil
}

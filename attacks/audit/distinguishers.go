package audit

import (
	"context"
	"fmt"

	"countwall/attacks"
)

// Distinguisher is a test that guesses which world the firewall fronts. Its
// decision rule is fixed before any answer is seen: choosing a threshold
// from the answers would need a held-out split to keep the confidence.
//
// A test with a Score instead of a Guess leaves the decision to the split
// estimator (split.go): its event is chosen on half the trials and bounded
// on the other half.
//
// A Timed test (a Score) is sampled apart from the others: Options.TimeTrials
// statements to each world, the two live deployments taking turns statement
// by statement.
type Distinguisher struct {
	Name        string
	Description string
	Queries     int
	Guess       func(ctx context.Context, q attacks.Querier) (World, error)
	Score       func(ctx context.Context, q attacks.Querier) (float64, error)
	Timed       bool
}

// The audited table, as dataset.WriteNeighbours writes it: people(id, grp,
// flag); the audited person is in cell grp = 't' with cellRows others, and
// alone has flag = 1.
const (
	cellSQL  = "SELECT COUNT(*) FROM people WHERE grp = 't'"
	aloneSQL = "SELECT COUNT(*) FROM people WHERE flag = 1"
)

// AveragedQueries is how many times the averaging test repeats its query.
const AveragedQueries = 25

// Default is the set of tests run against every mechanism, for a cell that
// holds cellRows people besides the audited one.
func Default(cellRows int) []Distinguisher {
	mid := float64(cellRows) + 0.5
	return []Distinguisher{
		{
			Name:        "count",
			Description: fmt.Sprintf("one count of the person's cell; with if above %g", mid),
			Queries:     1,
			Guess: func(ctx context.Context, q attacks.Querier) (World, error) {
				v, err := attacks.Count(ctx, q, cellSQL)
				return above(v, mid), err
			},
		},
		{
			Name:        "average",
			Description: fmt.Sprintf("the mean of %d counts of the person's cell; with if above %g", AveragedQueries, mid),
			Queries:     AveragedQueries,
			Guess: func(ctx context.Context, q attacks.Querier) (World, error) {
				sum := 0.0
				for range AveragedQueries {
					v, err := attacks.Count(ctx, q, cellSQL)
					if err != nil {
						return Without, err
					}
					sum += v
				}
				return above(sum/AveragedQueries, mid), nil
			},
		},
		{
			Name:        "count-split",
			Description: "one count of the person's cell; the event (a count at least or at most t) chosen on half the trials, bounded on the other half",
			Queries:     1,
			Score: func(ctx context.Context, q attacks.Querier) (float64, error) {
				return attacks.Count(ctx, q, cellSQL)
			},
		},
		{
			// Under IDP a threshold just above the true count is answered
			// exactly (0) without the person and with noise with them.
			Name:        "threshold",
			Description: fmt.Sprintf("COUNT(*) > %d over the person's cell; with unless the answer is exactly 0", cellRows+1),
			Queries:     1,
			Guess: func(ctx context.Context, q attacks.Querier) (World, error) {
				v, err := attacks.Count(ctx, q, fmt.Sprintf("SELECT COUNT(*) > %d FROM people WHERE grp = 't'", cellRows+1))
				return nonZero(v), err
			},
		},
		{
			// Under BDP a predicate no record satisfies is answered exactly.
			Name:        "alone",
			Description: "one count of a predicate only the person satisfies; with unless the answer is exactly 0",
			Queries:     1,
			Guess: func(ctx context.Context, q attacks.Querier) (World, error) {
				v, err := attacks.Count(ctx, q, aloneSQL)
				return nonZero(v), err
			},
		},
	}
}

func above(v, mid float64) World {
	if v > mid {
		return With
	}
	return Without
}

func nonZero(v float64) World {
	if v != 0 {
		return With
	}
	return Without
}

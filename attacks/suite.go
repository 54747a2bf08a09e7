package attacks

import (
	"context"
	"fmt"
)

// DemoOptions are an attack's defaults on the demo database (the people
// table that `countwall gen people` writes), sized so that the attack runs in
// seconds through the wire against a 20,000-row table.
func DemoOptions(name string) (Options, error) {
	people := Target{Table: "people"}
	switch name {
	case Differencing.Name:
		// 1..10 people in a 20,000-row table: a count suppress withholds.
		return Options{Target: Target{Table: "people", Where: "suburb = 'suburb_0015' AND age > 60"}}, nil
	case Averaging.Name:
		return Options{Target: Target{Table: "people", Where: "sex = 'F' AND age BETWEEN 40 AND 44"}}, nil
	case PerturbationFinder.Name:
		// The 100 most populous suburbs: disjoint cells, each split by sex.
		cells := make([]string, 100)
		for i := range cells {
			cells[i] = fmt.Sprintf("suburb = 'suburb_%04d'", i+1)
		}
		return Options{Target: people, Cells: cells, Split: []string{"sex = 'F'", "sex = 'M'"}}, nil
	case NoiseRemover.Name:
		// The age histogram, 0..100, at K = 50: about 10,600 queries, each
		// total right with probability about 0.92 at D = 2.
		return Options{Target: people, Column: "age", Values: IntRange(0, 100), K: 50, BaseK: 200, BaseSize: 10, Seed: 1}, nil
	}
	return Options{}, fmt.Errorf("no demo defaults for attack %q", name)
}

// RunSuite runs the named attack with its demo defaults (DemoOptions)
// through q, counting its queries and reading the budget back, and scores it
// against the protected database at truthPath when that is not empty. The
// result is ready to be written as JSON or shown in a report card; a
// firewall that refuses the attack's first query is an error, one that stops
// it later (a spent budget) ends it with what it recovered so far.
func RunSuite(ctx context.Context, q Querier, name, truthPath string) (*Result, error) {
	a, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown attack %q", name)
	}
	o, err := DemoOptions(name)
	if err != nil {
		return nil, err
	}
	logged, ok := q.(*Logged)
	if !ok {
		logged = &Logged{Querier: q}
	}
	return Execute(ctx, a, logged, o, truthPath)
}

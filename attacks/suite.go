package attacks

import (
	"context"
	"fmt"
)

// DemoOptions are an attack's defaults on the demo database (Attack.Demo).
func DemoOptions(name string) (Options, error) {
	a, ok := Lookup(name)
	if !ok || a.Demo == nil {
		return Options{}, fmt.Errorf("no demo defaults for attack %q", name)
	}
	return a.Demo(), nil
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

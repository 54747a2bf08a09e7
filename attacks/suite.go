package attacks

import (
	"context"
	"fmt"

	"countwall/dataset"
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
	if err := PrepareDemo(ctx, &o, truthPath); err != nil {
		return nil, err
	}
	logged, ok := q.(*Logged)
	if !ok {
		logged = &Logged{Querier: q}
	}
	return Execute(ctx, a, logged, o, truthPath)
}

// PrepareDemo gives an attack what the attacker knows beforehand on the demo
// database at dbPath: the public columns (Background) and, for
// prior-release, the earlier exact release, which the data owner published
// from the same table.
func PrepareDemo(ctx context.Context, o *Options, dbPath string) error {
	o.Background = dbPath
	if _, ok := o.Params.(*TracingParams); ok {
		o.Background = dataset.PopulationPath(dbPath)
	}
	p, ok := o.Params.(*PriorReleaseParams)
	if !ok || p.Release != "" || p.ReleaseDSN != "" || p.ReleaseConfig != "" || len(o.Domains) != 1 {
		return nil
	}
	truth, err := TrueHistogram(ctx, dbPath, o.Target, o.Domains[0].Column)
	if err != nil {
		return fmt.Errorf("publishing the demo's exact release: %w", err)
	}
	values := domainLiterals(o.Domains[0])
	p.Pairs = make([]int64, len(values)-1)
	for i := range p.Pairs {
		p.Pairs[i] = truth[literalText(values[i])] + truth[literalText(values[i+1])]
	}
	return nil
}

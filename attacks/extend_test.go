package attacks

import (
	"context"
	"testing"
)

// A new attack is one file and one registration line. The attack below is
// the whole of one (an adaptive attack of one query that reads a target's
// count as published); a real one ends its file with
// `func init() { register(TargetCount) }`, and `countwall attack NAME`, its
// --help, `attack list` and --json pick it up from the registry. Here it is
// registered inside the test and removed after, so that it stays out of
// the other tests' listings.
var targetCountExample = &Attack{
	Name:    "target-count-example",
	Against: "exact",
	Source:  "an example",
	Summary: "the target's count as the firewall publishes it",
	Run: func(ctx context.Context, q Querier, o Options) (*Result, error) {
		n, err := Count(ctx, q, o.Target.querySQL())
		if err != nil {
			return nil, err
		}
		return &Result{Estimate: n, Recovered: int64(n)}, nil
	},
	Demo: func() Options { return Options{Target: Target{Table: "people", Where: "age > 60"}} },
}

// fixedAnswer answers every statement with one count, and keeps the last.
type fixedAnswer struct {
	count string
	last  string
}

func (f *fixedAnswer) Query(_ context.Context, sql string) (*Rows, error) {
	f.last = sql
	return &Rows{Columns: []string{"count"}, Values: [][]string{{f.count}}}, nil
}

func TestOneFileAttack(t *testing.T) {
	register(targetCountExample)
	t.Cleanup(func() { delete(registry, targetCountExample.Name) })
	a, ok := Lookup("target-count-example")
	if !ok {
		t.Fatal("the registered attack is not found by name")
	}
	q := &fixedAnswer{count: "42"}
	res, err := a.Run(context.Background(), q, a.Demo())
	if err != nil {
		t.Fatal(err)
	}
	if res.Recovered != 42 || q.last != "SELECT COUNT(*) FROM people WHERE age > 60" {
		t.Errorf("recovered %d from %q, want 42 from the demo target's count", res.Recovered, q.last)
	}
}

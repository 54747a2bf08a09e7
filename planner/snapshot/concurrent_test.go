package snapshot_test

import (
	"context"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
)

// TestSnapshotConcurrentQueries: eight goroutines ask the snapshot
// plain, distinct-unit and bounded (ranked) counts at once; every answer
// must equal SQLite's for the same statement (run with -race).
func TestSnapshotConcurrentQueries(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 23))
	rows := fixture.Rows(r, 3000)
	sqlRows := fixture.SQLRows(rows)
	raw, fast := openBothPaths(t, sqlRows)
	people := fixture.People()
	type job struct {
		q     *ir.Query
		needs ir.Needs
		want  *ir.Result
	}
	gen := fixture.Gen{R: r}
	var jobs []job
	for i := range 64 {
		q := &ir.Query{Table: "people", Where: gen.Pred(2)}
		q.GroupBy = [][]string{nil, {"sex"}, {"age"}, {"sex", "suburb"}}[i%4]
		needs := []ir.Needs{{Units: true}, {Key: true}, {Bound: true, Units: true, Bounds: ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 2}},
			{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 10, MaxGroupsPerUnit: 1}}}[i/4%4]
		want, err := raw.Run(context.Background(), people, q, needs, fixture.Secret)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job{q, needs, want})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 3 * len(jobs) {
				j := jobs[(k*7+g)%len(jobs)]
				got, ok, err := fast.Answer(context.Background(), people, j.q, j.needs, fixture.Secret)
				if !ok {
					continue
				}
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					continue
				}
				want := *j.want
				g2 := *got
				withoutPath(&want, &g2)
				if !reflect.DeepEqual(&want, &g2) {
					mu.Lock()
					failures = append(failures, fixture.DebugSQL(people, j.q))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for _, f := range failures[:min(len(failures), 5)] {
		t.Error(f)
	}
}

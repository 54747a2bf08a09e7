package snapshot_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

// TestSnapshotUnitChangeUnderLoad: queries under two configs that name
// different privacy units arrive at once (a reload while statements are in
// flight); every answer, from the snapshot or the fallback, must be
// SQLite's for its config (run with -race).
func TestSnapshotUnitChangeUnderLoad(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	rows := fixture.Rows(r, 2000)
	sqlRows := fixture.SQLRows(rows)
	var readsMu sync.Mutex
	reads := 0
	path := filepath.Join(t.TempDir(), "reads.db")
	fixture.WritePeople(t, path, sqlRows)
	raw, fast := openPaths(t, path, plan.StoreOptions{OnSnapshot: func(info plan.SnapshotInfo) {
		if !info.InProgress && info.Err == nil {
			readsMu.Lock()
			reads++
			readsMu.Unlock()
		}
	}})
	byID, byAge := fixture.People(), fixture.People()
	byAge.PrivacyUnit = "age"
	gen := fixture.Gen{R: r}
	type job struct {
		tbl   *ir.Table
		q     *ir.Query
		needs ir.Needs
		want  *ir.Result
	}
	var jobs []job
	for i := range 40 {
		tbl := []*ir.Table{byID, byAge}[i%2]
		q := &ir.Query{Table: "people", Where: gen.Pred(2), GroupBy: [][]string{nil, {"sex"}}[i/2%2]}
		needs := []ir.Needs{{Units: true}, {Bound: true, Units: true, Bounds: ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 1}}}[i/4%2]
		want, err := raw.Run(context.Background(), tbl, q, needs, fixture.Secret)
		if err != nil {
			t.Fatal(err)
		}
		withoutPath(want)
		jobs = append(jobs, job{tbl, q, needs, want})
	}
	var wg sync.WaitGroup
	errs := make(chan string, 1000)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 60 {
				j := jobs[(k*3+g)%len(jobs)]
				got, err := fast.Run(context.Background(), j.tbl, j.q, j.needs, fixture.Secret)
				if err != nil {
					errs <- err.Error()
					continue
				}
				withoutPath(got)
				if !reflect.DeepEqual(j.want, got) {
					errs <- fixture.DebugSQL(j.tbl, j.q)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	readsMu.Lock()
	t.Logf("the table was read %d times for 240 statements", reads)
	readsMu.Unlock()
	n := 0
	for e := range errs {
		if n++; n <= 5 {
			t.Error(e)
		}
	}
}

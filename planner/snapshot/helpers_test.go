package snapshot_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
	"countwall/planner/snapshot"
	"countwall/planner/sqlite"
)

// The snapshot is held to SQLite: each test opens one file twice, through
// SQLite alone (raw) and through the snapshot with SQLite behind it as its
// fallback (fast), as the Engine opens a SQLite file (proxy.OpenStore).

// openPaths opens the SQLite file at path through SQLite alone and through
// the snapshot under opts, whose fallback is that SQLite store.
func openPaths(t *testing.T, path string, opts plan.StoreOptions) (raw *sqlite.Store, fast *snapshot.Store) {
	t.Helper()
	raw, err := sqlite.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	fast, err = snapshot.Open(path, opts, raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fast.Close() })
	return raw, fast
}

// openBothPaths writes rows of the people table to a new file and opens it
// through both paths.
func openBothPaths(t *testing.T, sqlRows [][]any) (raw *sqlite.Store, fast *snapshot.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "unique.db")
	fixture.WritePeople(t, path, sqlRows)
	return openPaths(t, path, plan.StoreOptions{})
}

// oneRowPerUnit is n random rows keyed by their unit (id = row number), the
// id of every nullEvery-th row NULL (none when nullEvery is 0), as rows and
// as values in fixture.Columns order for fixture.WritePeople.
func oneRowPerUnit(r *rand.Rand, n, nullEvery int) ([]fixture.Row, [][]any) {
	rows := fixture.Rows(r, n)
	for i, row := range rows {
		row["id"] = int64(i)
		if nullEvery > 0 && i%nullEvery == 0 {
			row["id"] = nil
		}
	}
	return rows, fixture.SQLRows(rows)
}

// answer is q answered by the snapshot alone, which must not decline it.
func answer(t *testing.T, fast *snapshot.Store, tbl *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (*ir.Result, error) {
	t.Helper()
	res, ok, err := fast.Answer(context.Background(), tbl, q, needs, secret)
	if !ok {
		t.Fatalf("the snapshot declined %s", fixture.DebugSQL(tbl, q))
	}
	return res, err
}

// sameOnBothPaths runs query i on SQLite alone (raw) and on the snapshot
// (fast), which must answer it, and reports any figure that differs.
func sameOnBothPaths(t *testing.T, i int, raw *sqlite.Store, fast *snapshot.Store, tbl *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) {
	t.Helper()
	want, err := raw.Run(context.Background(), tbl, q, needs, secret)
	if err != nil {
		t.Fatal(err)
	}
	got, err := answer(t, fast, tbl, q, needs, secret)
	if err != nil {
		t.Fatal(err)
	}
	withoutPath(want, got)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("query %d %s %+v: SQLite %+v, snapshot %+v", i, fixture.DebugSQL(tbl, q), needs, want.Cells, got.Cells)
	}
}

// withoutPath clears what names the path that answered, so that results of
// two paths compare by their figures.
func withoutPath(results ...*ir.Result) {
	for _, r := range results {
		if r != nil {
			r.Path = ""
		}
	}
}

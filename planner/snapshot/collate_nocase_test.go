package snapshot_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

// TestSnapshotCollateNocase: a column declared COLLATE NOCASE compares and
// groups case-insensitively in SQLite. The snapshot declines a condition,
// a group or units on such a column (SQLite answers them), and answers
// what touches only other columns, with SQLite's figures.
func TestSnapshotCollateNocase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nocase.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TABLE people (id TEXT COLLATE NOCASE, age INTEGER, sex TEXT COLLATE NOCASE, suburb TEXT, income INTEGER)`,
		`INSERT INTO people VALUES ('a', 1, 'F', 'N', 1), ('A', 2, 'f', 'N', 1), ('b', 3, 'M', 'N', 1), ('B', 4, 'm', 'N', 1)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	raw, fast := openPaths(t, path, plan.StoreOptions{})
	people := fixture.People()
	people.Columns["id"].Type = ir.TypeText
	ctx := context.Background()
	for i, tc := range []struct {
		q        *ir.Query
		needs    ir.Needs
		declined bool
	}{
		{&ir.Query{Table: "people", Where: &ir.Compare{Column: "sex", Op: "=", Value: fixture.TextLit("F")}}, ir.Needs{}, true},
		{&ir.Query{Table: "people", Agg: ir.CountDistinct}, ir.Needs{}, true},
		{&ir.Query{Table: "people"}, ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}}, true},
		{&ir.Query{Table: "people", GroupBy: []string{"sex"}}, ir.Needs{}, true},
		{&ir.Query{Table: "people", Where: &ir.Compare{Column: "age", Op: ">", Value: fixture.IntLit(1)}}, ir.Needs{}, false},
		{&ir.Query{Table: "people", Where: &ir.IsNull{Column: "sex", Negate: true}, GroupBy: []string{"suburb"}}, ir.Needs{}, false},
	} {
		want, err := raw.Run(ctx, people, tc.q, tc.needs, fixture.Secret)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := fast.Answer(ctx, people, tc.q, tc.needs, fixture.Secret)
		if ok == tc.declined {
			t.Errorf("case %d %s: the snapshot answered %v, want %v", i, fixture.DebugSQL(people, tc.q), ok, !tc.declined)
			continue
		}
		if !ok {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if want.Cells[0].Count != got.Cells[0].Count {
			t.Errorf("case %d %s: SQLite %d, snapshot %d", i, fixture.DebugSQL(people, tc.q), want.Cells[0].Count, got.Cells[0].Count)
		}
	}
}

package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"countwall/ir"
)

// readSumsTable writes rows (id, g, k, v) to a fresh file and reads it as
// the store would, in the order of id.
func readSumsTable(t *testing.T, rows [][4]any) *Table {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE s (id INTEGER, g INTEGER, k INTEGER, v REAL)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := tx.Exec(`INSERT INTO s VALUES (?, ?, ?, ?)`, r[:]...); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	snap, err := readSnapshot(context.Background(), conn, "s", "id", 1<<30, func() int64 { return 1 }, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestBoundedSumsWorkIsNotSetByOnePerson is the timing check of bounded
// sums under the claiming mechanisms: neighbouring tables of the same size
// that differ in one person's 12 rows (all in one cell with values far
// past the bounds; spread over 12 cells, past G; not matching the WHERE;
// NULL values) get the same work from a bounded SUM, grouped or not: the
// same rows and places visited, and the same allocations once the first
// query has made the scratch. Their answers differ, so the person is
// seen by the figures (which the mechanism noises) and not by the work.
// The time per query is logged, not tested (the machine is shared).
func TestBoundedSumsWorkIsNotSetByOnePerson(t *testing.T) {
	var base [][4]any
	for u := range 400 {
		for c := range 3 {
			base = append(base, [4]any{u, (u + c) % 12, u % 2, float64(u%97) + 0.1*float64(c)})
		}
	}
	person := func(cell func(i int) int, k int, v any) [][4]any {
		rows := slices.Clone(base)
		for i := range 12 {
			rows = append(rows, [4]any{1000, cell(i), k, v})
		}
		return rows
	}
	worlds := []struct {
		name string
		rows [][4]any
	}{
		{"one cell, values past the bounds", person(func(int) int { return 0 }, 1, 1e9)},
		{"twelve cells, past G", person(func(i int) int { return i }, 1, 5.0)},
		{"no row matching", person(func(i int) int { return i }, 0, 5.0)},
		{"NULL values", person(func(int) int { return 3 }, 1, nil)},
	}
	bounds := &ir.ValueBounds{Min: 0, Max: 100}
	tbl := &ir.Table{Name: "s", PrivacyUnit: "id", Columns: map[string]*ir.Column{
		"id": {Name: "id", Type: ir.TypeInt}, "g": {Name: "g", Type: ir.TypeInt}, "k": {Name: "k", Type: ir.TypeInt},
		"v": {Name: "v", Type: ir.TypeReal, Bounds: bounds}}}
	b := ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 3}
	for _, grouped := range []bool{false, true} {
		q := &ir.Query{Table: "s", Where: &ir.Compare{Column: "k", Op: "=", Value: ir.Literal{Kind: ir.LitInt, Int: 1}},
			Aggregates: []ir.Aggregate{{Func: ir.FuncSum, Column: "v"}}}
		if grouped {
			q.GroupBy = []string{"g"}
		}
		var works []int
		var allocs []float64
		var answers []string
		for _, w := range worlds {
			snap := readSumsTable(t, w.rows)
			groups, _ := snap.groupColumns(tbl, q)
			radix, _ := groupRadix(groups)
			cols := []sumColumn{newSumColumn(snap.columns["v"], tbl.Columns["v"])}
			ev := newSnapEval(snap, tbl, ir.Needs{Oblivious: true})
			matched, ok := ev.matched(q)
			if !ok {
				t.Fatal("the WHERE was not evaluated")
			}
			unit := snap.columns["id"]
			run := func() ([]ir.Cell, int) {
				return snap.boundedSumCells(matched, unit, groups, radix, cols, []byte("secret"), b, grouped)
			}
			cells, work := run() // the first query makes the cell order and the scratch
			works = append(works, work)
			answers = append(answers, fmt.Sprint(cells))
			allocs = append(allocs, testing.AllocsPerRun(20, func() { run() }))
			start := time.Now()
			for range 200 {
				run()
			}
			t.Logf("grouped %v, %s: work %d, %.0f allocations, %v a query", grouped, w.name, work, allocs[len(allocs)-1], time.Since(start)/200)
			ev.release()
		}
		rows := len(base) + 12
		wantWork := rows + 401 // every row, then one place a person
		if grouped {
			wantWork = 2 * rows // every row, then as many places as rows
		}
		for i, w := range worlds {
			if works[i] != wantWork || allocs[i] != allocs[0] && !raceDetector {
				t.Errorf("grouped %v, %s: work %d and %.0f allocations, want %d and %.0f", grouped, w.name, works[i], allocs[i], wantWork, allocs[0])
			}
		}
		for i := 1; i < len(answers); i++ {
			if answers[i] == answers[0] {
				t.Errorf("grouped %v: the answers of %q and %q are the same: the person changes nothing", grouped, worlds[0].name, worlds[i].name)
			}
		}
	}
}

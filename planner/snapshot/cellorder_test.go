package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"countwall/ir"
	_ "modernc.org/sqlite"
)

// readTestTable writes rows (id, g) to a fresh file and reads it as the
// store would, in the order of id.
func readTestTable(t *testing.T, rows [][2]int64) *Table {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE p (id INTEGER, g INTEGER)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := tx.Exec(`INSERT INTO p VALUES (?, ?)`, r[0], r[1]); err != nil {
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
	snap, err := readSnapshot(context.Background(), conn, "p", "id", 1<<30, func() int64 { return 1 }, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestKeepFirstWorkIsNotSetByOnePerson: two tables that differ in one
// person, who has 1,500 cells in the second (cells others are in too), and
// a bounded GROUP BY whose WHERE matches none of that person's rows. The
// cell order's maxCells is set by that person, but after the first query
// keepFirst allocates nothing on either table: its marks and counts are
// kept between queries, so no query clears arrays of that size. The cells
// and their counts are the same on both.
func TestKeepFirstWorkIsNotSetByOnePerson(t *testing.T) {
	var base [][2]int64
	for u := range 500 {
		for c := range 3 {
			base = append(base, [2]int64{int64(u), int64(3*u + c)})
		}
	}
	neighbour := append([][2]int64{}, base...)
	for c := range 1500 {
		neighbour = append(neighbour, [2]int64{100000, int64(c)})
	}
	tbl := &ir.Table{Name: "p", PrivacyUnit: "id", Columns: map[string]*ir.Column{
		"id": {Name: "id", Type: ir.TypeInt}, "g": {Name: "g", Type: ir.TypeInt}}}
	q := &ir.Query{Table: "p", GroupBy: []string{"g"}}
	var cells [2][]ir.Cell
	for i, rows := range [][][2]int64{base, neighbour} {
		snap := readTestTable(t, rows)
		groups, _ := snap.groupColumns(tbl, q)
		unit := snap.columns["id"]
		order := snap.cellOrder(unit, groups, []byte("secret"))
		// The person's rows are the last run; match every other row.
		matched := newBitset(snap.rows)
		for r := range int(unit.prefix[500]) {
			matched.set(r)
		}
		radix, _ := groupRadix(groups)
		totals := newCellTotals(radix, 1<<20)
		order.keepFirst(matched, unit, 1, 1, totals) // the first query makes the scratch
		cells[i] = totals.cells(groups, boundedFinish(ir.Needs{Units: true}))
		if allocs := testing.AllocsPerRun(20, func() { order.keepFirst(matched, unit, 1, 1, totals) }); allocs > 1 {
			t.Errorf("table %d (maxCells %d): keepFirst allocated %.0f times a query", i, order.maxCells, allocs)
		}
	}
	if !reflect.DeepEqual(cells[0], cells[1]) {
		t.Errorf("the cells differ: %d against %d", len(cells[0]), len(cells[1]))
	}
}

// TestCellOrderCacheKeepsLastFour: docs/performance.md says the cell order is
// kept "for each of the last 4 shapes asked"; after a fifth shape, the
// fourth-last asked should still be held.
func TestCellOrderCacheKeepsLastFour(t *testing.T) {
	var rows [][2]int64
	for u := range 50 {
		for c := range 3 {
			rows = append(rows, [2]int64{int64(u), int64(c)})
		}
	}
	snap := readTestTable(t, rows)
	tbl := &ir.Table{Name: "p", PrivacyUnit: "id", Columns: map[string]*ir.Column{
		"id": {Name: "id", Type: ir.TypeInt}, "g": {Name: "g", Type: ir.TypeInt}}}
	groups, _ := snap.groupColumns(tbl, &ir.Query{Table: "p", GroupBy: []string{"g"}})
	unit := snap.columns["id"]
	var orders []*cellOrder
	for s := range 5 { // five shapes: one column under five secrets
		orders = append(orders, snap.cellOrder(unit, groups, []byte(fmt.Sprint("secret", s))))
	}
	if again := snap.cellOrder(unit, groups, []byte("secret4")); again != orders[4] {
		t.Errorf("the last shape asked was computed again")
	}
	if again := snap.cellOrder(unit, groups, []byte("secret2")); again != orders[2] {
		t.Errorf("the third-last shape asked was computed again: the fifth emptied the cache")
	}
}

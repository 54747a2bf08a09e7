package planner

import (
	"context"
	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
	"database/sql"
	"path/filepath"
	"reflect"
	"testing"
)

// writeStorageClasses writes a table whose grp column has no declared type,
// so that SQLite keeps what it is given: 100 people with the integer 1, one
// each with the text '1', the real 1.0 and the blob x'31', one with the text
// '2', one with the real 2.5 and one with NULL. Person 1 also has a second
// row with the text '1', so a unit spans two storage classes of one group.
// num is an integer column holding the same kinds of values.
func writeStorageClasses(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "classes.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE classes (id INTEGER, grp, num INTEGER)`); err != nil {
		t.Fatal(err)
	}
	insert := func(id int, grp, num any) {
		if _, err := db.Exec(`INSERT INTO classes VALUES (?, ?, ?)`, id, grp, num); err != nil {
			t.Fatal(err)
		}
	}
	for id := 1; id <= 100; id++ {
		insert(id, int64(1), int64(1))
	}
	insert(1, "1", "1")
	insert(101, "1", []byte("1"))
	insert(102, 1.0, 1.0)
	insert(103, []byte("1"), "one")
	insert(104, "2", int64(2))
	insert(105, 2.5, 2.5)
	insert(106, nil, nil)
	return path
}

func storageClassesTable(withDomains bool) *ir.Table {
	t := &ir.Table{Name: "classes", PrivacyUnit: "id", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{
		"id":  {Name: "id", Type: ir.TypeInt},
		"grp": {Name: "grp", Type: ir.TypeText},
		"num": {Name: "num", Type: ir.TypeInt},
	}}
	if withDomains {
		t.Columns["grp"].Domain = &ir.Domain{Categories: []string{"1", "2"}}
		t.Columns["num"].Domain = &ir.Domain{IsRange: true, Min: 1, Max: 2}
	}
	return t
}

// TestGroupCellIsTheSumOfWhatMapsToIt checks, on the SQLite SQL and on the
// snapshot, that a cell counts every stored value its column's type reads
// as the cell's value, with distinct units and contributor keys over the
// merged group and contribution bounds applied to a unit's rows together.
func TestGroupCellIsTheSumOfWhatMapsToIt(t *testing.T) {
	path := writeStorageClasses(t)
	g := func(s string) []ir.GroupValue { return []ir.GroupValue{{Text: s}} }
	null := []ir.GroupValue{{Null: true}}
	tests := []struct {
		name    string
		domains bool
		q       *ir.Query
		needs   ir.Needs
		want    []ir.Cell
	}{
		{
			name: "text column without a domain: one group per text, NULL first",
			q:    &ir.Query{Table: "classes", GroupBy: []string{"grp"}}, needs: ir.Needs{Units: true},
			want: []ir.Cell{
				{Group: null, Count: 1, Units: 1, InDomain: true},
				{Group: g("1"), Count: 104, Units: 103, InDomain: true},
				{Group: g("2"), Count: 1, Units: 1, InDomain: true},
				{Group: g("2.5"), Count: 1, Units: 1, InDomain: true},
			},
		},
		{
			name: "text column over a declared domain",
			q:    &ir.Query{Table: "classes", GroupBy: []string{"grp"}}, domains: true, needs: ir.Needs{Units: true},
			want: []ir.Cell{
				{Group: g("1"), Count: 104, Units: 103, InDomain: true},
				{Group: g("2"), Count: 1, Units: 1, InDomain: true},
			},
		},
		{
			name: "integer column: numbers by value, text and blobs read as NULL",
			q:    &ir.Query{Table: "classes", GroupBy: []string{"num"}}, needs: ir.Needs{Units: true},
			want: []ir.Cell{
				{Group: null, Count: 3, Units: 3, InDomain: true},
				{Group: g("1"), Count: 102, Units: 101, InDomain: true},
				{Group: g("2"), Count: 1, Units: 1, InDomain: true},
				{Group: g("2.5"), Count: 1, Units: 1, InDomain: true},
			},
		},
		{
			name: "count distinct units over a domain",
			q:    &ir.Query{Table: "classes", GroupBy: []string{"grp"}, Agg: ir.CountDistinct}, domains: true,
			want: []ir.Cell{
				{Group: g("1"), Count: 103, InDomain: true},
				{Group: g("2"), Count: 1, InDomain: true},
			},
		},
		{
			name: "bounded: person 1's two rows in group 1 are clamped together",
			q:    &ir.Query{Table: "classes", GroupBy: []string{"grp"}}, domains: true,
			needs: ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 2}},
			want: []ir.Cell{
				{Group: g("1"), Count: 103, InDomain: true},
				{Group: g("2"), Count: 1, InDomain: true},
			},
		},
	}
	for _, backend := range []struct {
		name string
		opts plan.StoreOptions
	}{{"sqlite", plan.StoreOptions{NoSnapshot: true}}, {"snapshot", plan.StoreOptions{}}} {
		store, err := OpenStore(path, backend.opts)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		for _, tc := range tests {
			t.Run(backend.name+"/"+tc.name, func(t *testing.T) {
				res, err := store.Run(context.Background(), storageClassesTable(tc.domains), tc.q, tc.needs, fixture.Secret)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(res.Cells, tc.want) {
					t.Fatalf("cells\n got %+v\nwant %+v", res.Cells, tc.want)
				}
				if backend.name != "snapshot" {
					return
				}
				if res.Path != ir.PathSnapshot {
					t.Fatalf("answered on the %s path, want the snapshot's", res.Path)
				}
				if tc.needs.Bound {
					return
				}
				// The snapshot itself must answer, not decline to SQLite.
				tbl := storageClassesTable(tc.domains)
				direct, ok, err := store.snap.Answer(context.Background(), tbl, tc.q, tc.needs, fixture.Secret)
				if err != nil || !ok {
					t.Fatalf("the snapshot declined (%v, %v)", ok, err)
				}
				if !reflect.DeepEqual(direct.Cells, tc.want) {
					t.Fatalf("snapshot cells\n got %+v\nwant %+v", direct.Cells, tc.want)
				}
			})
		}
	}
}

// TestGroupCellKeysMatchAcrossBackends compares the contributor keys of
// merged groups between the SQLite SQL and the snapshot.
func TestGroupCellKeysMatchAcrossBackends(t *testing.T) {
	path := writeStorageClasses(t)
	q := &ir.Query{Table: "classes", GroupBy: []string{"grp"}}
	var got [2][]ir.Cell
	for i, opts := range []plan.StoreOptions{{NoSnapshot: true}, {}} {
		store, err := OpenStore(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		res, err := store.Run(context.Background(), storageClassesTable(true), q, ir.Needs{Key: true}, fixture.Secret)
		store.Close()
		if err != nil {
			t.Fatal(err)
		}
		got[i] = res.Cells
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Fatalf("SQLite %+v\nsnapshot %+v", got[0], got[1])
	}
	if got[0][0].Units != 103 {
		t.Fatalf("units of cell 1: %d, want 103", got[0][0].Units)
	}
}

// TestRankedCellsMatchAcrossBackends: when each unit keeps G of its cells by
// keyed hash, SQLite's SQL and the snapshot keep the same ones, also where a
// group merges an integer and an equal real whose texts differ (10^15 and
// 1e+15), so that either member may be the value the rank is computed from.
func TestRankedCellsMatchAcrossBackends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ranked.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE classes (id INTEGER, grp, num INTEGER)`); err != nil {
		t.Fatal(err)
	}
	for id := 1; id <= 300; id++ {
		// Four cells per unit, one of them stored as an integer on one row
		// and as the equal real on another.
		for _, num := range []any{int64(1e15), 1e15, int64(id % 7), float64(id%5) + 0.5, nil} {
			if _, err := db.Exec(`INSERT INTO classes VALUES (?, ?, ?)`, id, num, num); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Close()
	var got [2][]ir.Cell
	for i, opts := range []plan.StoreOptions{{NoSnapshot: true}, {}} {
		store, err := OpenStore(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, col := range []string{"num", "grp"} {
			q := &ir.Query{Table: "classes", GroupBy: []string{col}}
			res, err := store.Run(context.Background(), storageClassesTable(false), q, ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 1}, Units: true}, fixture.Secret)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{ir.PathSQLite, ir.PathSnapshot}[i]; res.Path != want {
				t.Fatalf("%s: answered on the %s path, want %s", col, res.Path, want)
			}
			got[i] = append(got[i], res.Cells...)
		}
		store.Close()
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("SQLite and the snapshot keep different cells:\n sqlite   %+v\n snapshot %+v", got[0], got[1])
	}
	var units int64
	for _, c := range got[0] {
		units += c.Units
	}
	if units != 600 { // each of 300 units in one cell, for each of two columns
		t.Errorf("%d (unit, cell) pairs kept, want 600", units)
	}
}

package dataset

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// writeEdgeSource writes people(id INTEGER, age INTEGER, town TEXT): 40
// people, id 1..40, age 20 + id%10, town 'a' for the first 30 and 'b' for
// the rest.
func writeEdgeSource(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE people (id INTEGER PRIMARY KEY, age INTEGER, town TEXT)`); err != nil {
		t.Fatal(err)
	}
	for id := 1; id <= 40; id++ {
		town := "a"
		if id > 30 {
			town = "b"
		}
		if _, err := db.Exec(`INSERT INTO people VALUES (?, ?, ?)`, id, 20+id%10, town); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAddedNeighbours writes each edge's two worlds from a 40-person table
// (the audited person is id 7, age 27, town 'a') and reads back what each
// world holds: a summary query's answer without and with the person.
func TestAddedNeighbours(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	writeEdgeSource(t, src)
	base := NeighbourSpec{Table: "people", Unit: "id", Value: int64(7)}
	for _, tt := range []struct {
		name          string
		set           map[string]string
		hold          *Holders
		distinct      *DistinctValues
		query         string
		without, with string
	}{
		{name: "unchanged", query: "SELECT COUNT(*) || '/' || SUM(id = 7) FROM people", without: "39/0", with: "40/1"},
		{name: "blob", set: map[string]string{"town": "CAST(town AS BLOB)"},
			query: "SELECT group_concat(typeof(town) || ':' || hex(town)) FROM people WHERE id = 7", without: "", with: "blob:61"},
		{name: "invalid utf-8", set: map[string]string{"town": "CAST(CAST(town AS BLOB) || X'FF' AS TEXT)"},
			query: "SELECT group_concat(typeof(town) || ':' || hex(town)) FROM people WHERE id = 7", without: "", with: "text:61FF"},
		{name: "real in an integer column", set: map[string]string{"age": "age + 0.5"},
			query: "SELECT group_concat(typeof(age) || ':' || age) FROM people WHERE id = 7", without: "", with: "real:27.5"},
		{name: "text in an integer column", set: map[string]string{"age": "'NaN'"},
			query: "SELECT group_concat(typeof(age) || ':' || age) FROM people WHERE id = 7", without: "", with: "text:NaN"},
		{name: "real unit", set: map[string]string{"id": "id + 0.5"},
			query: "SELECT COUNT(*) || '/' || SUM(typeof(id) = 'real') FROM people", without: "39/0", with: "40/1"},
		{name: "a value held by 12 rows, and the person", set: map[string]string{"age": "99", "town": "'b'"}, hold: &Holders{Column: "age", Value: int64(99), Rows: 12},
			query: "SELECT SUM(age = 99) || '/' || SUM(age = 99 AND town = 'a') FROM people", without: "12/12", with: "13/12"},
		{name: "a value held by 12 rows, which also hold town 'b'", set: map[string]string{"age": "99"}, hold: &Holders{Column: "age", Value: int64(99), Rows: 12, Also: map[string]any{"town": "b"}},
			query: "SELECT SUM(age = 99) || '/' || SUM(age = 99 AND town = 'b') || '/' || SUM(town = 'b') FROM people", without: "12/12/22", with: "13/12/22"},
		{name: "5 distinct values", set: map[string]string{"town": "'v0'"}, distinct: &DistinctValues{Column: "town", Values: 5},
			query: "SELECT COUNT(*) || '/' || COUNT(DISTINCT town) || '/' || MIN(town) || '/' || MAX(town) FROM people", without: "39/5/v1/v5", with: "40/6/v0/v5"},
		// 39 rows take values 1..39; 61 copies of the first row take
		// 40..100, each with a unit past the largest (40): 80..140.
		{name: "100 distinct values, padded", set: map[string]string{"age": "0"}, distinct: &DistinctValues{Column: "age", Values: 100},
			query: "SELECT COUNT(*) || '/' || COUNT(DISTINCT age) || '/' || COUNT(DISTINCT id) || '/' || MAX(id) || '/' || SUM(typeof(age) = 'integer') FROM people", without: "100/100/100/140/100", with: "101/101/101/140/101"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := base
			spec.Set, spec.Hold, spec.Distinct = tt.set, tt.hold, tt.distinct
			for _, w := range []struct {
				with bool
				want string
			}{{false, tt.without}, {true, tt.with}} {
				dst := filepath.Join(t.TempDir(), "world.db")
				if err := WriteNeighbourOf(context.Background(), src, dst, Added, spec, w.with); err != nil {
					t.Fatal(err)
				}
				var got sql.NullString
				if err := openReadOnly(t, dst).QueryRow(tt.query).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got.String != w.want {
					t.Errorf("with the person %v: %q, want %q", w.with, got.String, w.want)
				}
			}
		})
	}
}

// TestAddedNeighbourRefusesAHeldValue: a value some row past the first
// Rows already holds would be held by more rows than asked.
func TestAddedNeighbourRefusesAHeldValue(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	writeEdgeSource(t, src)
	spec := NeighbourSpec{Table: "people", Unit: "id", Value: int64(7), Hold: &Holders{Column: "age", Value: int64(29), Rows: 5}}
	if err := WriteNeighbourOf(context.Background(), src, filepath.Join(dir, "w.db"), Added, spec, false); err == nil {
		t.Fatal("age 29, held by rows past the fifth, was accepted")
	}
}

// TestColumnsOf reads the facts of the 40-person table without person 7.
func TestColumnsOf(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	writeEdgeSource(t, src)
	facts, rows, err := ColumnsOf(context.Background(), src, "people", "id", int64(7))
	if err != nil {
		t.Fatal(err)
	}
	if rows != 39 {
		t.Fatalf("%d rows, want 39", rows)
	}
	want := []ColumnFacts{
		{Name: "id", Integer: true, Distinct: 39, Common: int64(1), CommonRows: 1, Next: int64(2), MaxInt: 40, HasInt: true},
		// ages 20..29, four each, but 27 lost person 7: the smallest of the
		// most common is 20.
		{Name: "age", Integer: true, Distinct: 10, Common: int64(20), CommonRows: 4, Next: int64(21), MaxInt: 29, HasInt: true},
		{Name: "town", Distinct: 2, Common: "a", CommonRows: 29, Next: "b"},
	}
	if len(facts) != len(want) {
		t.Fatalf("facts %+v", facts)
	}
	for i := range want {
		if facts[i] != want[i] {
			t.Errorf("column %d: %+v, want %+v", i, facts[i], want[i])
		}
	}
}

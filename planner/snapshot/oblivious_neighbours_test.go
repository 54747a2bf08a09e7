package snapshot_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

// TestObliviousNeighboursTakeOnePath holds the snapshot to the rule of the
// claiming mechanisms: whether it answers a statement, and with what, is
// decided by the statement and the schema, never by how one person's value
// is stored. Each world is a base table plus one person whose value is
// stored in a class that used to send some statements to SQLite (invalid
// UTF-8, a BLOB, a real in an integer column, text in an integer column
// that reads as a number to Go but not to SQLite) or that changes a
// condition's cheapest way (one more holder of a frequent value). Every
// statement must be answered by the snapshot in every world, with SQLite's
// figures.
func TestObliviousNeighboursTakeOnePath(t *testing.T) {
	neighbours := []struct {
		name              string
		id, suburb, score string // SQL expressions for the added person's values
	}{
		{"none", "", "", ""},
		{"plain", "2001", "'suburb_000'", "7"},
		{"invalid UTF-8", "2001", "CAST(x'ff7375627572625f303030' AS TEXT)", "7"},
		{"blob", "2001", "x'7375627572625f303030'", "7"},
		{"real in an integer column", "2001", "'suburb_001'", "7.5"},
		{"text in an integer column", "2001", "'suburb_001'", "'NaN'"},
		{"another holder of 7777", "2001", "'suburb_002'", "7777"},
		{"a real unit", "2000.5", "'suburb_000'", "7"},
	}
	like := &ir.Like{Column: "suburb", Pattern: "suburb\\_000%"}
	statements := []struct {
		name  string
		query *ir.Query
		needs ir.Needs
	}{
		{"LIKE", &ir.Query{Table: "people", Where: like}, ir.Needs{}},
		{"NOT LIKE", &ir.Query{Table: "people", Where: &ir.Like{Column: "suburb", Pattern: "%0%", Negate: true}}, ir.Needs{}},
		{"equality and a second condition", &ir.Query{Table: "people", Where: &ir.And{
			Left:  &ir.Compare{Column: "score", Op: "=", Value: fixture.IntLit(7777)},
			Right: &ir.Compare{Column: "age", Op: "=", Value: fixture.IntLit(3)}}}, ir.Needs{}},
		{"IN on a mixed column", &ir.Query{Table: "people", Where: &ir.In{Column: "score", Values: []ir.Literal{fixture.IntLit(7), fixture.IntLit(7777)}}}, ir.Needs{}},
		{"range", &ir.Query{Table: "people", Where: &ir.Compare{Column: "score", Op: ">", Value: fixture.IntLit(100)}}, ir.Needs{}},
		{"bounded LIKE", &ir.Query{Table: "people", Where: like}, ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 1}}},
		{"distinct units", &ir.Query{Table: "people", Agg: ir.CountDistinct, Where: &ir.Not{Inner: like}}, ir.Needs{TableSize: true}},
		{"GROUP BY sex", &ir.Query{Table: "people", GroupBy: []string{"sex"}, Where: like}, ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}}},
		{"GROUP BY age, counts alone", &ir.Query{Table: "people", GroupBy: []string{"age"}, Where: like}, ir.Needs{TableSize: true}},
		{"GROUP BY age, units", &ir.Query{Table: "people", GroupBy: []string{"age"}, Where: &ir.Compare{Column: "score", Op: "<", Value: fixture.IntLit(300)}},
			ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 3}, Units: true}},
	}
	table := &ir.Table{Name: "people", PrivacyUnit: "id", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{
		"id":     {Name: "id", Type: ir.TypeInt},
		"age":    {Name: "age", Type: ir.TypeInt},
		"sex":    {Name: "sex", Type: ir.TypeText},
		"suburb": {Name: "suburb", Type: ir.TypeText},
		"score":  {Name: "score", Type: ir.TypeInt},
	}}
	table.Policy.AllowLike = true
	ctx := context.Background()
	keyed := *table
	keyed.UnitKeyed = true // every person of these tables has one row
	for _, world := range neighbours {
		t.Run(world.name, func(t *testing.T) {
			raw, fast := openPaths(t, writeNeighbour(t, world.id, world.suburb, world.score), plan.StoreOptions{})
			for i, st := range statements {
				table := table
				if i%2 == 1 {
					table = &keyed
				}
				needs := st.needs
				needs.Oblivious = true
				want, werr := raw.Run(ctx, table, st.query, needs, fixture.Secret)
				got, ok, gerr := fast.Answer(ctx, table, st.query, needs, fixture.Secret)
				if !ok {
					t.Errorf("%s: the snapshot left it to SQLite", st.name)
					continue
				}
				withoutPath(want, got)
				if fmt.Sprint(werr) != fmt.Sprint(gerr) || fmt.Sprint(want) != fmt.Sprint(got) {
					t.Errorf("%s:\nSQLite:   %+v %v\nsnapshot: %+v %v", st.name, want, werr, got, gerr)
				}
			}
		})
	}
}

// writeNeighbour writes 2,000 people, 312 of them holding score 7777 (the
// count at which the cheapest way for score = 7777 used to change), and,
// when id is not empty, one more person with those values as stored.
func writeNeighbour(t *testing.T, id, suburb, score string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "people.db")
	var extra string
	if id != "" {
		extra = fmt.Sprintf(`INSERT INTO people VALUES (%s, 3, 'F', %s, %s)`, id, suburb, score)
	}
	fixture.WriteSQL(t, path,
		`CREATE TABLE people (id INTEGER, age INTEGER, sex TEXT, suburb TEXT, score INTEGER)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
		 INSERT INTO people SELECT i, i % 7, CASE i % 2 WHEN 0 THEN 'F' ELSE 'M' END,
		   printf('suburb_%03d', i % 40), CASE WHEN i <= 312 THEN 7777 ELSE i % 500 END FROM n`,
		extra)
	return path
}

// TestSnapshotLikeMatchesSQLiteOnAnyBytes holds the snapshot's LIKE to
// SQLite's on stored text that is not valid UTF-8 (lone continuation
// bytes, truncated and overlong sequences, 0xFF, NUL), on blobs and on
// reals: 400 seeded random values, 150 seeded random patterns, every
// count equal.
func TestSnapshotLikeMatchesSQLiteOnAnyBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 2026))
	alphabet := []string{"a", "b", "%", "_", `\`, "é", "\xc3", "\xa9", "\x80", "\xff", "\xf0\x9f\x98", "\x00", "\xe0\x80\x80", "\xed\xa0\x80", "1", "."}
	word := func(n int) string {
		var b strings.Builder
		for range r.IntN(n) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	path := filepath.Join(t.TempDir(), "bytes.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE people (id INTEGER, v)`); err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		var err error
		switch i % 8 {
		case 0: // a blob
			_, err = db.Exec(`INSERT INTO people VALUES (?, ?)`, i, []byte(word(5)))
		case 1: // a real
			_, err = db.Exec(`INSERT INTO people VALUES (?, ?)`, i, r.Float64()*float64(r.IntN(1000))-100)
		case 2: // an integer
			_, err = db.Exec(`INSERT INTO people VALUES (?, ?)`, i, r.IntN(200)-50)
		default: // text with whatever bytes
			_, err = db.Exec(`INSERT INTO people VALUES (?, CAST(? AS TEXT))`, i, []byte(word(6)))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	raw, fast := openPaths(t, path, plan.StoreOptions{})
	table := &ir.Table{Name: "people", PrivacyUnit: "id", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{
		"id": {Name: "id", Type: ir.TypeInt}, "v": {Name: "v", Type: ir.TypeText}}}
	ctx := context.Background()
	matched := 0
	for i := range 150 {
		pattern := word(5)
		if i%5 == 0 {
			pattern = "%" + pattern + "%"
		}
		q := &ir.Query{Table: "people", Where: &ir.Like{Column: "v", Pattern: pattern, Negate: i%3 == 0}}
		for _, oblivious := range []bool{false, true} {
			needs := ir.Needs{Oblivious: oblivious}
			want, err := raw.Run(ctx, table, q, needs, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := fast.Answer(ctx, table, q, needs, nil)
			if !ok || err != nil {
				t.Fatalf("pattern %q: the snapshot did not answer (%v)", pattern, err)
			}
			if want.Cells[0].Count != got.Cells[0].Count {
				t.Errorf("pattern %q (negated %v): SQLite counts %d, the snapshot %d", pattern, i%3 == 0, want.Cells[0].Count, got.Cells[0].Count)
			}
			if want.Cells[0].Count > 0 && i%3 != 0 {
				matched++
			}
		}
	}
	if matched < 40 {
		t.Errorf("only %d LIKE patterns matched a row: the comparison is weak", matched)
	}
}

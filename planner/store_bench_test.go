package planner

import (
	"context"
	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"path/filepath"
	"strconv"
	"testing"
)

// benchRows is the size of the benchmark table.
const benchRows = 100_000

// benchDB writes a deterministic 100,000-row people table (about three rows
// per unit) and returns its path. Benchmarks use b.Loop, so it runs once per
// benchmark.
func benchDB(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.db")
	fixture.WritePeople(b, path, nil, `
		INSERT INTO people (id, age, sex, suburb, income)
		WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < `+strconv.Itoa(benchRows)+`)
		SELECT x / 3, (x * 7919) % 90, CASE (x * 13) % 2 WHEN 0 THEN 'F' ELSE 'M' END,
		       'S' || ((x * 31) % 200), (x * 104729) % 100000 FROM c`)
	return path
}

// benchWhere is the predicate every benchmark counts: age BETWEEN 30 AND 49
// AND sex = 'F' (about 11% of the rows).
var benchWhere = &ir.And{
	Left:  &ir.Between{Column: "age", Lo: fixture.IntLit(30), Hi: fixture.IntLit(49)},
	Right: &ir.Compare{Column: "sex", Op: "=", Value: fixture.TextLit("F")},
}

func BenchmarkRawSQLiteCount(b *testing.B) {
	path := benchDB(b)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for b.Loop() {
		var n int64
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM people WHERE (age BETWEEN ? AND ? AND sex = ?)`, 30, 49, "F").Scan(&n); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRun answers q through the snapshot (read before the loop, as the
// first query reads it), or through SQLite alone when sqliteOnly.
func benchRun(b *testing.B, q *ir.Query, needs ir.Needs, sqliteOnly ...bool) {
	s, err := OpenStore(benchDB(b), plan.StoreOptions{NoSnapshot: len(sqliteOnly) > 0 && sqliteOnly[0]})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	people := fixture.People()
	ctx := context.Background()
	if _, err := s.Run(ctx, people, q, needs, fixture.Secret); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.Run(ctx, people, q, needs, fixture.Secret); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStoreCountOnly(b *testing.B) {
	benchRun(b, &ir.Query{Table: "people", Where: benchWhere}, ir.Needs{})
}

// The SQLite-only lines are the store before the snapshot, for the ratio.
func BenchmarkStoreCountOnlySQLite(b *testing.B) {
	benchRun(b, &ir.Query{Table: "people", Where: benchWhere}, ir.Needs{}, true)
}

func BenchmarkStoreWithKeySQLite(b *testing.B) {
	benchRun(b, &ir.Query{Table: "people", Where: benchWhere}, ir.Needs{Key: true}, true)
}

func BenchmarkStoreWithUnits(b *testing.B) {
	benchRun(b, &ir.Query{Table: "people", Where: benchWhere}, ir.Needs{Units: true})
}

func BenchmarkStoreWithKey(b *testing.B) {
	benchRun(b, &ir.Query{Table: "people", Where: benchWhere}, ir.Needs{Key: true})
}

func BenchmarkStoreWithTableSize(b *testing.B) {
	benchRun(b, &ir.Query{Table: "people", Where: benchWhere}, ir.Needs{TableSize: true})
}

func BenchmarkStoreGroupByWithKey(b *testing.B) {
	benchRun(b, &ir.Query{Table: "people", Where: benchWhere, GroupBy: []string{"suburb"}}, ir.Needs{Key: true})
}

func BenchmarkRecordKey(b *testing.B) {
	var sink uint32
	i := int64(0)
	for b.Loop() {
		sink += plan.RecordKey(fixture.Secret, i)
		i++
	}
	_ = sink
}

// BenchmarkRecordKeyUnpooled keys a fresh HMAC for every unit: the cost the
// cached hashers save.
func BenchmarkRecordKeyUnpooled(b *testing.B) {
	var sink uint32
	i := int64(0)
	for b.Loop() {
		m := hmac.New(sha256.New, fixture.Secret)
		m.Write(strconv.AppendInt(nil, i, 10))
		sink += binary.BigEndian.Uint32(m.Sum(nil))
		i++
	}
	_ = sink
}

// reconWhere is the shape of an IDP reconstruction statement late in the
// search: equalities on the columns already settled, a range on the next.
var reconWhere = &ir.And{
	Left: &ir.And{
		Left:  &ir.Compare{Column: "sex", Op: "=", Value: fixture.TextLit("F")},
		Right: &ir.Compare{Column: "suburb", Op: "=", Value: fixture.TextLit("S17")},
	},
	Right: &ir.Between{Column: "income", Lo: fixture.IntLit(20000), Hi: fixture.IntLit(60000)},
}

// The reconstruction statement through the snapshot and through SQLite alone:
//
//	go test ./planner -run '^$' -bench Reconstruction -count 6 | benchstat -
func BenchmarkReconstructionStatement(b *testing.B) {
	q := &ir.Query{Table: "people", Threshold: &ir.Threshold{Bound: 3}, Where: reconWhere}
	b.Run("snapshot", func(b *testing.B) { benchRun(b, q, ir.Needs{TableSize: true}) })
	b.Run("sqlite", func(b *testing.B) { benchRun(b, q, ir.Needs{TableSize: true}, true) })
}

// The same statements under the data-oblivious evaluation that claiming
// mechanisms ask for (every leaf a pass over every row), beside the
// cheapest ways:
//
//	go test ./planner -run '^$' -bench 'Oblivious' -count 6 | benchstat -
func BenchmarkObliviousStatements(b *testing.B) {
	bounded := ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}}
	like := &ir.Like{Column: "suburb", Pattern: "S1%"}
	for _, c := range []struct {
		name  string
		q     *ir.Query
		needs ir.Needs
	}{
		{"count", &ir.Query{Table: "people", Where: benchWhere}, ir.Needs{}},
		{"bounded-count", &ir.Query{Table: "people", Where: benchWhere}, bounded},
		{"reconstruction", &ir.Query{Table: "people", Threshold: &ir.Threshold{Bound: 3}, Where: reconWhere}, ir.Needs{TableSize: true}},
		{"like", &ir.Query{Table: "people", Where: like}, bounded},
		{"in-list", &ir.Query{Table: "people", Where: &ir.In{Column: "age", Values: []ir.Literal{fixture.IntLit(3), fixture.IntLit(30), fixture.IntLit(60)}}}, bounded},
		{"group-by-bounded", &ir.Query{Table: "people", Where: benchWhere, GroupBy: []string{"suburb"}}, bounded},
		{"group-by-counts", &ir.Query{Table: "people", Where: benchWhere, GroupBy: []string{"suburb"}}, ir.Needs{TableSize: true}},
	} {
		for _, oblivious := range []bool{false, true} {
			needs := c.needs
			needs.Oblivious = oblivious
			name := c.name + "/cheapest"
			if oblivious {
				name = c.name + "/oblivious"
			}
			b.Run(name, func(b *testing.B) { benchRun(b, c.q, needs) })
		}
	}
}

package planner

import (
	"context"
	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
	"countwall/planner/sqlgen"
	"strings"
	"testing"
)

// TestBoundedUnitWithManyRows: unit 1 has r rows in one cell (age 0) and
// unit 2 has r rows in r cells (ages 0..r-1), beside unit 3 with one row at
// age 0. Bounded counts move by at most C per cell and G cells per unit,
// whatever r is.
func TestBoundedUnitWithManyRows(t *testing.T) {
	for _, r := range []int{1, 5, 50} {
		var rows [][]any
		for i := range r {
			rows = append(rows, []any{1, 0, "F", "N", 1}, []any{2, i, "M", "N", 1})
		}
		rows = append(rows, []any{3, 0, "F", "N", 1})
		path := t.TempDir() + "/long.db"
		fixture.WritePeople(t, path, rows)
		s, err := OpenStore(path, plan.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		table := fixture.People()
		table.Columns["age"].Domain = &ir.Domain{IsRange: true, Min: 0, Max: 49}
		ctx := context.Background()
		plain := &ir.Query{Table: "people"}
		byAge := &ir.Query{Table: "people", GroupBy: []string{"age"}}
		cases := []struct {
			q     *ir.Query
			b     ir.Bounds
			total int64 // sum of the cells
			age0  int64 // the cell age = 0
			force ir.Bounds
		}{
			// A plain count counts each unit at most C times.
			{plain, ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}, 3, 3, ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}},
			{plain, ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 1}, int64(min(r, 3)*2 + 1), int64(min(r, 3)*2 + 1), ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 1}},
			// By age, G = 1: unit 2 keeps one of its r cells.
			{byAge, ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}, 3, -1, ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}},
			{byAge, ir.Bounds{MaxRowsPerUnit: 5, MaxGroupsPerUnit: 1}, int64(min(r, 5) + 1 + 1), -1, ir.Bounds{MaxRowsPerUnit: 5, MaxGroupsPerUnit: 1}},
			// G = 50 = the domain: no choice, unit 2 is in all its cells.
			{byAge, ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 50}, int64(1 + r + 1), 3, ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 50}},
			{byAge, ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 80}, int64(min(r, 2) + r + 1), int64(min(r, 2) + 2), ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 50}},
		}
		for _, tc := range cases {
			res, err := s.Run(ctx, table, tc.q, ir.Needs{Bound: true, Bounds: tc.b}, fixture.Secret)
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			for _, c := range res.Cells {
				total += c.Count
			}
			if total != tc.total || (tc.age0 >= 0 && res.Cells[0].Count != tc.age0) || res.Bounds != tc.force {
				t.Errorf("r=%d %v bounds %+v: total %d, first cell %d, in force %+v; want %d, %d, %+v",
					r, tc.q.GroupBy, tc.b, total, res.Cells[0].Count, res.Bounds, tc.total, tc.age0, tc.force)
			}
		}
		s.Close()
	}
}

// TestCompileBoundedSQL pins the shapes of the bounded rendering.
func TestCompileBoundedSQL(t *testing.T) {
	people := fixture.People()
	sexF := &ir.Compare{Column: "sex", Op: "=", Value: fixture.TextLit("F")}
	cases := []struct {
		name string
		q    *ir.Query
		b    ir.Bounds
		rank bool
		want string
		args int
	}{
		{"one row per unit", &ir.Query{Table: "people", Where: sexF}, ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}, false,
			`SELECT COUNT(DISTINCT "id") FROM "people" WHERE "id" IS NOT NULL AND ("sex" = ?)`, 1},
		{"clamped", &ir.Query{Table: "people", GroupBy: []string{"age"}}, ir.Bounds{MaxRowsPerUnit: 4, MaxGroupsPerUnit: 1}, false,
			`SELECT cw_g0, COALESCE(SUM(MIN(cw_n, 4)), 0) FROM (SELECT CASE WHEN typeof("age") IN ('integer', 'real') THEN "age" END AS cw_g0, "id" AS cw_u, COUNT(*) AS cw_n FROM "people" WHERE "id" IS NOT NULL GROUP BY "id", CASE WHEN typeof("age") IN ('integer', 'real') THEN "age" END) GROUP BY cw_g0 ORDER BY cw_g0`, 0},
		{"ranked", &ir.Query{Table: "people", GroupBy: []string{"age"}, Where: sexF}, ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 2}, true,
			`SELECT cw_g0, COUNT(*) FROM (SELECT * FROM (SELECT cw_g0, cw_n, ROW_NUMBER() OVER (PARTITION BY cw_u ORDER BY cw_r, cw_g0) AS cw_rank FROM (SELECT CASE WHEN typeof("age") IN ('integer', 'real') THEN "age" END AS cw_g0, "id" AS cw_u, COUNT(*) AS cw_n, countwall_cell_rank(?, "id", CASE WHEN typeof("age") IN ('integer', 'real') THEN "age" END) AS cw_r FROM "people" WHERE "id" IS NOT NULL AND ("sex" = ?) GROUP BY "id", CASE WHEN typeof("age") IN ('integer', 'real') THEN "age" END)) WHERE cw_rank <= 2) GROUP BY cw_g0 ORDER BY cw_g0`, 2},
		{"one cell per unit", &ir.Query{Table: "people", GroupBy: []string{"age"}}, ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 1}, true,
			`SELECT cw_g0, COALESCE(SUM(MIN(cw_n, 3)), 0) FROM (SELECT cw_g0, cw_n, MIN(cw_r) FROM (SELECT CASE WHEN typeof("age") IN ('integer', 'real') THEN "age" END AS cw_g0, "id" AS cw_u, COUNT(*) AS cw_n, countwall_cell_rank(?, "id", CASE WHEN typeof("age") IN ('integer', 'real') THEN "age" END) AS cw_r FROM "people" WHERE "id" IS NOT NULL GROUP BY "id", CASE WHEN typeof("age") IN ('integer', 'real') THEN "age" END) GROUP BY cw_u) GROUP BY cw_g0 ORDER BY cw_g0`, 1},
	}
	for _, tc := range cases {
		sql, args, err := sqlgen.SQLiteBounded(people, tc.q, ir.Needs{Bound: true}, tc.b, tc.rank, fixture.Secret)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if sql != tc.want || len(args) != tc.args {
			t.Errorf("%s:\n got %s (%d args)\nwant %s (%d args)", tc.name, sql, len(args), tc.want, tc.args)
		}
	}
	if _, _, err := sqlgen.SQLiteBounded(people, &ir.Query{Table: "people"}, ir.Needs{Key: true}, ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}, false, fixture.Secret); err == nil || !strings.Contains(err.Error(), "contributor keys") {
		t.Errorf("keys under bounds: %v", err)
	}
	if _, _, err := sqlgen.SQLiteBounded(people, &ir.Query{Table: "people"}, ir.Needs{}, ir.Bounds{MaxRowsPerUnit: 0, MaxGroupsPerUnit: 1}, false, fixture.Secret); err == nil {
		t.Error("a bound of 0 was accepted")
	}
}

// The cost of bounding, as a ratio to the unbounded count of the same query
// on the 100,000-row benchmark table (about three rows per unit):
// BenchmarkStoreBounded*/BenchmarkStoreCountOnly and
// BenchmarkStoreBoundedGroupBy*/BenchmarkStoreGroupByCountOnly.
func BenchmarkStoreBoundedOneRow(b *testing.B) {
	benchRun(b, &ir.Query{Table: "people", Where: benchWhere}, ir.Needs{Bound: true})
}

func BenchmarkStoreBoundedClamped(b *testing.B) {
	benchRun(b, &ir.Query{Table: "people", Where: benchWhere}, ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 2}})
}

// benchByAge is a GROUP BY age over all rows, with age's domain declared.
var benchByAge = &ir.Query{Table: "people", GroupBy: []string{"age"}}

func benchRunTable(b *testing.B, t *ir.Table, q *ir.Query, needs ir.Needs) {
	s, err := OpenStore(benchDB(b), plan.StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Run(ctx, t, q, needs, fixture.Secret); err != nil {
			b.Fatal(err)
		}
	}
}

func ageDomainTable() *ir.Table {
	t := fixture.People()
	t.Columns["age"].Domain = &ir.Domain{IsRange: true, Min: 0, Max: 89}
	return t
}

func BenchmarkStoreGroupByCountOnly(b *testing.B) {
	benchRunTable(b, ageDomainTable(), benchByAge, ir.Needs{})
}

func BenchmarkStoreBoundedGroupByG1(b *testing.B) {
	benchRunTable(b, ageDomainTable(), benchByAge, ir.Needs{Bound: true})
}

func BenchmarkStoreBoundedGroupByAllCells(b *testing.B) {
	benchRunTable(b, ageDomainTable(), benchByAge, ir.Needs{Bound: true, Bounds: ir.Bounds{MaxGroupsPerUnit: 90}})
}

package planner

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"countwall/internal/pgtest"
	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

// TestPostgresDifferentialBoundedSums holds the PostgreSQL path's bounded
// sums (its sums SQL, one row per cell and person, folded in Go) to the
// SQLite path's on the same seeded rows: persons with up to 30 rows in up
// to 12 cells, rows without a person, NULL groups and values, values past
// the bounds. Every figure must be equal; the reals are multiples of 1/4,
// so that each backend's own way of adding floats gives the same sums.
func TestPostgresDifferentialBoundedSums(t *testing.T) {
	rows := boundedSumRows(rand.New(rand.NewPCG(35, 3)), 250)
	url := pgtest.Server(t).NewDatabase(t)
	path := filepath.Join(t.TempDir(), "spend.db")
	const ddl = `CREATE TABLE spend (id integer, region text, age integer, amount integer, score %s)`
	for _, target := range []struct{ driver, dsn, real, insert string }{
		{"pgx", url, "double precision", `INSERT INTO spend VALUES ($1, $2, $3, $4, $5)`},
		{"sqlite", path, "REAL", `INSERT INTO spend VALUES (?, ?, ?, ?, ?)`},
	} {
		db, err := sql.Open(target.driver, target.dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(fmt.Sprintf(ddl, target.real)); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if _, err := db.Exec(target.insert, r...); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
	}
	pg, err := OpenStore(url, plan.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	lite, err := OpenStore(path, plan.StoreOptions{NoSnapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	amount, score := ir.ValueBounds{Min: -100, Max: 1000}, ir.ValueBounds{Min: -50.5, Max: 120.25}
	table := &ir.Table{Name: "spend", PrivacyUnit: "id", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{
		"id": {Name: "id", Type: ir.TypeInt}, "region": {Name: "region", Type: ir.TypeText}, "age": {Name: "age", Type: ir.TypeInt},
		"amount": {Name: "amount", Type: ir.TypeInt, Bounds: &amount}, "score": {Name: "score", Type: ir.TypeReal, Bounds: &score},
	}}
	ctx := context.Background()
	cells := 0
	for i, where := range []ir.Pred{nil, &ir.Compare{Column: "age", Op: "<", Value: fixture.IntLit(5)},
		&ir.In{Column: "region", Values: []ir.Literal{fixture.TextLit("r01"), fixture.TextLit("r07")}}} {
		for _, groups := range [][]string{nil, {"region"}, {"region", "age"}} {
			q := &ir.Query{Table: "spend", Where: where, GroupBy: groups}
			for pos, a := range []ir.Aggregate{{Func: ir.FuncSum, Column: "amount", Alias: "sum"}, {Func: ir.FuncAvg, Column: "score", Alias: "avg"}, {Func: ir.FuncCount, Alias: "count"}} {
				a.Position = len(groups) + pos
				q.Aggregates = append(q.Aggregates, a)
			}
			for _, b := range []ir.Bounds{{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}, {MaxRowsPerUnit: 3, MaxGroupsPerUnit: 4}} {
				needs := ir.Needs{Bound: true, Bounds: b, Units: i%2 == 0, Oblivious: true}
				want, err := lite.Run(ctx, table, q, needs, fixture.Secret)
				if err != nil {
					t.Fatal(err)
				}
				got, err := pg.Run(ctx, table, q, needs, fixture.Secret)
				if err != nil {
					t.Fatal(err)
				}
				if got.Path != ir.PathPostgres {
					t.Fatalf("answered by %s", got.Path)
				}
				want.Path, got.Path = "", ""
				if w, g := fmt.Sprintf("%+v", want), fmt.Sprintf("%+v", got); w != g {
					t.Errorf("%s %+v:\nSQLite:     %s\nPostgreSQL: %s", fixture.DebugSQL(table, q), b, w, g)
				}
				cells += len(want.Cells)
			}
		}
	}
	if cells < 200 {
		t.Errorf("only %d cells compared: the comparison is weak", cells)
	}
}

// boundedSumRows are seeded rows (id, region, age, amount, score) for the
// bounded sums differential test, in a shuffled order.
func boundedSumRows(r *rand.Rand, persons int) [][]any {
	var rows [][]any
	row := func(id any) []any {
		region := any(fmt.Sprintf("r%02d", r.IntN(12)))
		if r.IntN(20) == 0 {
			region = nil
		}
		amount := any(int64(r.IntN(2600) - 500))
		if r.IntN(20) == 0 {
			amount = nil
		}
		score := any(float64(r.IntN(1200)-300) / 4)
		if r.IntN(15) == 0 {
			score = nil
		}
		return []any{id, region, int64(r.IntN(10)), amount, score}
	}
	for p := range persons {
		n := 1 + r.IntN(4)
		if r.IntN(8) == 0 {
			n = 5 + r.IntN(26)
		}
		for range n {
			rows = append(rows, row(int64(p)))
		}
	}
	for range persons / 10 {
		rows = append(rows, row(nil))
	}
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	return rows
}

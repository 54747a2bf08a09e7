package snapshot_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

// spendTable is the catalog of the bounded sums tests' table: persons (id)
// with several rows each, an integer and a real column to sum with public
// bounds that many values pass.
func spendTable() *ir.Table {
	amount, score := ir.ValueBounds{Min: -100, Max: 1000}, ir.ValueBounds{Min: -50.5, Max: 120.25}
	return &ir.Table{Name: "spend", PrivacyUnit: "id", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{
		"id":     {Name: "id", Type: ir.TypeInt},
		"region": {Name: "region", Type: ir.TypeText},
		"age":    {Name: "age", Type: ir.TypeInt},
		"amount": {Name: "amount", Type: ir.TypeInt, Bounds: &amount},
		"score":  {Name: "score", Type: ir.TypeReal, Bounds: &score},
	}}
}

// writeSpend writes a seeded spend table: persons with 1 to 40 rows (rows
// inserted in a shuffled order, so that a person's rows are not adjacent
// in the file), rows without a person, NULL groups and values, values
// outside the bounds, reals that are not sums of powers of two, and values
// that are not numbers of their column's type (a real and text in the
// integer column).
func writeSpend(t testing.TB, seed uint64, persons int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 35))
	var rows [][]any
	for p := range persons {
		n := 1 + r.IntN(4)
		if r.IntN(8) == 0 {
			n = 5 + r.IntN(36)
		}
		for range n {
			rows = append(rows, spendRow(r, any(int64(p))))
		}
	}
	for range persons / 10 {
		rows = append(rows, spendRow(r, nil))
	}
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	path := filepath.Join(t.TempDir(), "spend.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE spend (id INTEGER, region TEXT, age INTEGER, amount INTEGER, score REAL)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if _, err := tx.Exec(`INSERT INTO spend VALUES (?, ?, ?, ?, ?)`, row...); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}

func spendRow(r *rand.Rand, id any) []any {
	region := any(fmt.Sprintf("r%02d", r.IntN(12)))
	if r.IntN(20) == 0 {
		region = nil
	}
	amount := any(int64(r.IntN(2600) - 500))
	switch r.IntN(25) {
	case 0:
		amount = nil
	case 1:
		amount = "n/a"
	case 2:
		amount = 12.5
	}
	score := any(r.NormFloat64()*90 + 20)
	if r.IntN(15) == 0 {
		score = nil
	}
	return []any{id, region, int64(r.IntN(10)), amount, score}
}

// spendQueries are the bounded sums the tests ask: every kind of WHERE the
// snapshot evaluates, with and without GROUP BY, SUM and AVG of both
// columns.
func spendQueries() []*ir.Query {
	sums := []ir.Aggregate{{Func: ir.FuncSum, Column: "amount", Alias: "sum"}, {Func: ir.FuncAvg, Column: "score", Alias: "avg", Position: 1},
		{Func: ir.FuncCount, Alias: "count", Position: 2}}
	wheres := []ir.Pred{
		nil,
		&ir.Compare{Column: "age", Op: "<", Value: fixture.IntLit(5)},
		&ir.In{Column: "region", Values: []ir.Literal{fixture.TextLit("r01"), fixture.TextLit("r07"), fixture.TextLit("r11")}},
		&ir.Compare{Column: "amount", Op: ">", Value: fixture.IntLit(700)},
	}
	var qs []*ir.Query
	for _, w := range wheres {
		for _, groups := range [][]string{nil, {"region"}, {"region", "age"}} {
			aggs := sums
			if len(groups) > 0 {
				aggs = make([]ir.Aggregate, len(sums))
				for i, a := range sums {
					a.Position += len(groups)
					aggs[i] = a
				}
			}
			qs = append(qs, &ir.Query{Table: "spend", Where: w, GroupBy: groups, Aggregates: aggs})
		}
	}
	return qs
}

// TestBoundedSumsMatchSQLiteToTheBit pins the snapshot's bounded sums to
// the SQLite path's on seeded tables: every cell, count, unit count, count
// of values, exact integer sum and floating-point sum (raw and clamped,
// after C/n scaling) the same to the bit, under several C and G, oblivious
// or not.
func TestBoundedSumsMatchSQLiteToTheBit(t *testing.T) {
	ctx := context.Background()
	table := spendTable()
	compared, scaled := 0, 0
	for _, seed := range []uint64{1, 2, 3} {
		raw, fast := openPaths(t, writeSpend(t, seed, 300), plan.StoreOptions{})
		for qi, q := range spendQueries() {
			for _, b := range []ir.Bounds{{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}, {MaxRowsPerUnit: 3, MaxGroupsPerUnit: 2}, {MaxRowsPerUnit: 7, MaxGroupsPerUnit: 5}} {
				needs := ir.Needs{Bound: true, Bounds: b, Units: qi%2 == 0, Oblivious: qi%3 != 0}
				want, werr := raw.Run(ctx, table, q, needs, fixture.Secret)
				got, ok, gerr := fast.Answer(ctx, table, q, needs, fixture.Secret)
				if !ok {
					t.Fatalf("seed %d query %d: the snapshot left bounded sums to SQLite", seed, qi)
				}
				if werr != nil || gerr != nil {
					t.Fatalf("seed %d query %d: SQLite %v, snapshot %v", seed, qi, werr, gerr)
				}
				if got.Path != ir.PathSnapshot {
					t.Fatalf("seed %d query %d: answered by %s", seed, qi, got.Path)
				}
				withoutPath(want, got)
				if w, g := fmt.Sprintf("%+v", want), fmt.Sprintf("%+v", got); w != g {
					t.Errorf("seed %d query %d %s %+v:\nSQLite:   %s\nsnapshot: %s", seed, qi, fixture.DebugSQL(table, q), b, w, g)
				}
				compared += len(want.Cells)
				for _, c := range want.Cells {
					if c.Sums[1].N == b.MaxRowsPerUnit*c.Units && c.Sums[1].Clamped != float64(int64(c.Sums[1].Clamped)) {
						scaled++
					}
				}
			}
		}
	}
	if compared < 500 || scaled < 20 {
		t.Errorf("only %d cells compared, %d at the cap with a fractional clamped sum: the comparison is weak", compared, scaled)
	}
}

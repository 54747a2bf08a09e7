package snapshot

import (
	"path/filepath"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
)

// BenchmarkWideDomainLeaf compares a condition on a column of 500,001
// declared values answered from the rows' ranks with the scan of every
// row's code, on 1,048,576 rows: go test ./planner/snapshot -run '^$'
// -bench WideDomainLeaf.
func BenchmarkWideDomainLeaf(b *testing.B) {
	path := filepath.Join(b.TempDir(), "wide.db")
	fixture.WriteSQL(b, path,
		`CREATE TABLE people (id INTEGER, income INTEGER)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1048576)
		 INSERT INTO people SELECT i, abs(random()) % 500001 FROM n`)
	snap := readFile(b, path, "people", "id")
	table := &ir.Table{Name: "people", PrivacyUnit: "id", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{
		"id":     {Name: "id", Type: ir.TypeInt},
		"income": {Name: "income", Type: ir.TypeInt, Domain: &ir.Domain{IsRange: true, Min: 0, Max: 500000}},
	}}
	lit := ir.Literal{Kind: ir.LitInt, Int: 100000}
	for _, bc := range []struct {
		name string
		leaf ir.Pred
	}{
		{"greater", &ir.Compare{Column: "income", Op: ">", Value: lit}},
		{"equal", &ir.Compare{Column: "income", Op: "=", Value: lit}},
		{"between", &ir.Between{Column: "income", Lo: lit, Hi: ir.Literal{Kind: ir.LitInt, Int: 200000}}},
	} {
		b.Run(bc.name+"/ranks", func(b *testing.B) {
			for range b.N {
				e := newSnapEval(snap, table, ir.Needs{Oblivious: true})
				if _, _, ok := e.planeLeaf(bc.leaf, true); !ok {
					b.Fatal("not answered from ranks")
				}
				e.release()
			}
		})
		b.Run(bc.name+"/scan", func(b *testing.B) {
			for range b.N {
				e := newSnapEval(snap, table, ir.Needs{Oblivious: true})
				c, set, _, _ := e.leafSet(bc.leaf)
				e.scanLeaf(c, set, oneRange(bc.leaf))
				e.release()
			}
		})
	}
}

package planner

import (
	"context"
	"path/filepath"
	"testing"

	"countwall/dataset"
	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

// The cost of bounding on a long table, apart from any mechanism's noise:
// the bench's long table (10,000 people with 1 to 20 rows each, 105,530
// rows) answered from the snapshot plain and bounded (C = 3, G = 8), one
// COUNT and the bench's two GROUP BYs. The ratios are each bounded line over
// its plain one:
//
//	go test ./planner -run '^$' -bench StoreLong -count 6 | benchstat -
func BenchmarkStoreLong(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "long.db")
	if err := dataset.GeneratePeople(ctx, path, dataset.PeopleOptions{Rows: 10000, Seed: 1, MaxRowsPerPerson: 20}, dataset.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	s, err := OpenStore(path, plan.StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	people := &ir.Table{Name: "people", PrivacyUnit: "id", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{}}
	for _, c := range []string{"id", "age", "zip", "hours"} {
		people.Columns[c] = &ir.Column{Name: c, Type: ir.TypeInt}
	}
	people.Columns["sex"] = &ir.Column{Name: "sex", Type: ir.TypeText}
	people.Policy.MaxGroups = 1000
	queries := map[string]*ir.Query{
		"count": {Table: "people", Where: &ir.And{
			Left:  &ir.Between{Column: "age", Lo: fixture.IntLit(30), Hi: fixture.IntLit(39)},
			Right: &ir.Compare{Column: "sex", Op: "=", Value: fixture.TextLit("F")},
		}},
		"group-hours": {Table: "people", GroupBy: []string{"hours"}},
		"group-zip":   {Table: "people", Where: &ir.Compare{Column: "sex", Op: "=", Value: fixture.TextLit("F")}, GroupBy: []string{"zip"}},
	}
	for _, name := range []string{"count", "group-hours", "group-zip"} {
		for _, way := range []struct {
			name  string
			needs ir.Needs
		}{
			{"plain", ir.Needs{}},
			{"bounded", ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 8}}},
		} {
			b.Run(name+"/"+way.name, func(b *testing.B) {
				res, err := s.Run(ctx, people, queries[name], way.needs, fixture.Secret)
				if err != nil {
					b.Fatal(err)
				}
				if res.Path != ir.PathSnapshot {
					b.Fatalf("answered on the %s path", res.Path)
				}
				for b.Loop() {
					if _, err := s.Run(ctx, people, queries[name], way.needs, fixture.Secret); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

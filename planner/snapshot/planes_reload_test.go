package snapshot

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
)

// budgetPeople is fixture.People with four domains of 255 values, 512 row
// sets each: together they fill maxPlaneSets. Each call is a config read
// afresh, as a reload reads it: new domains, equal in value.
func budgetPeople(ageMax int64) *ir.Table {
	table := fixture.People()
	var names []string
	for i := range 255 {
		names = append(names, fmt.Sprintf("v%03d", i))
	}
	table.Columns["age"].Domain = &ir.Domain{IsRange: true, Min: 0, Max: ageMax}
	table.Columns["income"].Domain = &ir.Domain{IsRange: true, Min: 0, Max: 254}
	table.Columns["id"].Domain = &ir.Domain{IsRange: true, Min: 0, Max: 254}
	table.Columns["sex"].Domain = &ir.Domain{Categories: names}
	return table
}

func budgetLeaf(table *ir.Table, col string) ir.Pred {
	if table.Columns[col].Type == ir.TypeText {
		return &ir.Compare{Column: col, Op: "=", Value: fixture.TextLit("v007")}
	}
	return &ir.Compare{Column: col, Op: "<", Value: fixture.IntLit(40)}
}

// TestPlanesAfterReload: a reload reads the config's domains afresh. A
// column whose domain is unchanged keeps its planes, and one whose domain
// changed replaces its planes within the budget its old ones held: neither
// is refused for the sets its own planes reserved, nor are those sets held
// twice.
func TestPlanesAfterReload(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	path := filepath.Join(t.TempDir(), "people.db")
	fixture.WritePeople(t, path, fixture.SQLRows(fixture.Rows(r, 500)))
	snap := readFile(t, path, "people", "id")
	columns := []string{"age", "income", "id", "sex"}
	for _, step := range []struct {
		name    string
		table   *ir.Table
		reserve int64
	}{
		{"start", budgetPeople(254), maxPlaneSets},
		{"a reload, domains unchanged", budgetPeople(254), maxPlaneSets},
		{"a reload narrowing age's domain", budgetPeople(99), maxPlaneSets - 512 + 202},
		{"a reload widening it back", budgetPeople(254), maxPlaneSets},
	} {
		for _, col := range columns {
			e := newSnapEval(snap, step.table, ir.Needs{Oblivious: true})
			if _, _, ok := e.planeLeaf(budgetLeaf(step.table, col), true); !ok {
				t.Errorf("%s: %s refused its planes (sets reserved %d)", step.name, col, snap.planeSets.Load())
			}
			e.release()
		}
		if got := snap.planeSets.Load(); got != step.reserve {
			t.Errorf("%s: %d sets reserved, want %d", step.name, got, step.reserve)
		}
	}
}

// TestPlanesUnderTwoConfigs: statements under a config and its reload
// (equal domains, and age's changed) at once answer as the scan does, and
// the budget ends holding one column's planes once (run with -race).
func TestPlanesUnderTwoConfigs(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	path := filepath.Join(t.TempDir(), "people.db")
	fixture.WritePeople(t, path, fixture.SQLRows(fixture.Rows(r, 700)))
	snap := readFile(t, path, "people", "id")
	configs := []*ir.Table{budgetPeople(254), budgetPeople(254), budgetPeople(60)}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 60 {
				table := configs[(g+k)%len(configs)]
				col := []string{"age", "income", "id", "sex"}[k%4]
				p := budgetLeaf(table, col)
				e := newSnapEval(snap, table, ir.Needs{Oblivious: true})
				got, _ := e.matched(&ir.Query{Table: "people", Where: p})
				byData := newSnapEval(snap, table, ir.Needs{})
				want, _ := byData.matched(&ir.Query{Table: "people", Where: p})
				if fmt.Sprint(got) != fmt.Sprint(want) {
					select {
					case errs <- fmt.Sprintf("%s: oblivious %d rows, by the data %d", col, got.count(), want.count()):
					default:
					}
				}
				e.release()
				byData.release()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var held int64
	for _, c := range snap.columns {
		if p := c.planes.Load(); p != nil {
			held += p.sets
		}
	}
	if got := snap.planeSets.Load(); got != held || got > maxPlaneSets {
		t.Errorf("%d sets reserved, the planes held reserve %d (at most %d)", got, held, maxPlaneSets)
	}
}

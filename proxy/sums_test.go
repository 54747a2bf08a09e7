package proxy

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"countwall/mechanisms"
	"countwall/pgerror"
	"countwall/proxy/state/release"
)

// Every mechanism but exact refuses SUM and AVG (laplace and gaussian over
// a column without bounds) at Price, before the data
// is read, with 0A000 and its name; exact answers them.
func TestSumAvgRefusedBeforeReadUnderOtherMechanisms(t *testing.T) {
	f := newFixture(t, 50)
	for _, name := range mechanismsUnderTest() {
		t.Run(name, func(t *testing.T) {
			e := f.open(t, name, nil)
			if name == "exact" {
				res, err := e.Query(context.Background(), "alice", "SELECT sex, SUM(income), COUNT(*) FROM people GROUP BY sex")
				if err != nil {
					t.Fatal(err)
				}
				// income is 1000*(i%50) for i = 1..50: F (odd i) 625000, M 600000.
				if got := [2]string{res.Rows[0][1].Text, res.Rows[1][1].Text}; got != [2]string{"625000", "600000"} || res.Rows[0][2].Int != 25 {
					t.Fatalf("sums = %v, rows %+v", got, res.Rows)
				}
				e.state.Flush()
				log, err := e.state.AuditLog(context.Background(), 10)
				if err != nil {
					t.Fatal(err)
				}
				q := log[len(log)-1].Query
				want := []release.Aggregate{{Func: "sum", Column: "income", Alias: "sum"}, {Func: "count", Alias: "count"}}
				if q == nil || !reflect.DeepEqual(q.Aggregates, want) {
					t.Fatalf("audited query %+v, want aggregates %+v", q, want)
				}
				cells := log[len(log)-1].Cells
				if len(cells) != 2 || cells[0].Value != 25 || cells[0].Aggregates[0].Text != "625000" || cells[0].Group[0].Text != "F" {
					t.Fatalf("audited cells %+v", cells)
				}
				return
			}
			forbidden := &forbiddenBackend{t: t}
			forbidden.stmt.Store("SUM")
			e.backend = forbidden
			_, err := e.Query(context.Background(), "alice", "SELECT AVG(income) FROM people")
			want := "mechanism " + name + " does not answer SUM/AVG yet"
			switch {
			case name == "laplace", name == "gaussian": // they need the column's bounds
				want = "only within its public bounds"
			case name == "idp", name == "bdp": // the papers give no sensitivity for sums
				want = name + " does not answer SUM or AVG"
			case mechanisms.ClampsSums(e.live.Load().mech): // the fixture declares no bounds for income
				want = `SUM and AVG over column "income" need its public bounds`
			}
			if got := pgerror.SQLState(err); got != pgerror.FeatureNotSupported || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v (%s), want 0A000: %s", err, got, want)
			}
		})
	}
}

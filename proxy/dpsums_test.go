package proxy

import (
	"context"
	"math"
	"strings"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
)

// Under laplace and gaussian, SUM and AVG over a column with declared bounds
// are answered as float8 near the truth (epsilon 50, so the noise is small
// beside the sums), COUNT beside them stays int8, the query is charged
// once, EXPLAIN states each aggregate's part, and countwall.confidence adds
// each aggregate's interval. A column without bounds is refused at Price.
func TestDPSumsAnswered(t *testing.T) {
	f := newFixture(t, 2000)
	ctx := context.Background()
	for _, name := range []string{"laplace", "gaussian"} {
		t.Run(name, func(t *testing.T) {
			cfg := f.config(t, name, nil)
			tc := cfg.Tables["people"]
			tc.ValueBounds = map[string]ir.ValueBounds{"income": {Min: 0, Max: 50000}}
			cfg.Tables["people"] = tc
			cfg.Budget.Epsilon.Max, cfg.Budget.EpsilonCap = 100, 1000
			e, err := Open(ctx, cfg, Options{NoiseSeed: 5})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			s := e.NewSession("alice")
			for _, set := range []string{"SET epsilon = 50", "SET delta = 1e-6"} {
				if _, err := s.Exec(ctx, set, nil); err != nil {
					t.Fatal(err)
				}
			}
			_, err = s.Exec(ctx, "SELECT SUM(age) FROM people", nil)
			if pgerror.SQLState(err) != pgerror.FeatureNotSupported || !strings.Contains(pgerror.Public(err).HintText(), "tables.people.bounds.age") {
				t.Fatalf("SUM(age) without bounds: %v", err)
			}
			res, err := s.Exec(ctx, "SELECT sex, SUM(income), AVG(income), COUNT(*) FROM people GROUP BY sex", nil)
			if err != nil {
				t.Fatal(err)
			}
			wantTypes := []ColumnType{ColumnText, ColumnFloat8, ColumnFloat8, ColumnInt8}
			for i, c := range res.Columns {
				if c.Type != wantTypes[i] {
					t.Errorf("column %s type %v, want %v", c.Name, c.Type, wantTypes[i])
				}
			}
			// income is 1000*(i%50): each sex 1000 rows, sum 25e6 (F, odd i) and 24e6 (M).
			for i, want := range []float64{25e6, 24e6} {
				row := res.Rows[i]
				if math.Abs(row[1].Float-want) > 0.01*want || math.Abs(row[2].Float-want/1000) > 0.01*want/1000 || math.Abs(float64(row[3].Int)-1000) > 10 {
					t.Errorf("row %d = %+v, want about %g, %g, 1000", i, row, want, want/1000)
				}
			}
			bals, err := e.budget.Balances(ctx, "alice")
			if err != nil || len(bals) == 0 || bals[0].Kind != "dp" || !(bals[0].EpsilonSpent >= 50) {
				t.Fatalf("balances %+v, %v", bals, err)
			}
			plan, err := s.Exec(ctx, "EXPLAIN SELECT SUM(income), AVG(income) FROM people", nil)
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			for _, r := range plan.Rows {
				text.WriteString(r[0].Text + "\n")
			}
			for _, want := range []string{"split equally between 2 aggregate(s)", "sum(income): values clamped to [0, 50000]", "avg(income): values clamped", "clamped to its column's bounds"} {
				if !strings.Contains(text.String(), want) {
					t.Errorf("EXPLAIN lacks %q:\n%s", want, text.String())
				}
			}
			if _, err := s.Exec(ctx, "SET countwall.confidence = 0.95", nil); err != nil {
				t.Fatal(err)
			}
			res, err = s.Exec(ctx, "SELECT SUM(income), AVG(income) FROM people", nil)
			if err != nil {
				t.Fatal(err)
			}
			row := res.Rows[0]
			if len(res.Columns) != 6 || res.Columns[2].Name != "sum_ci_low" || !(row[2].Float < row[0].Float && row[0].Float < row[3].Float) ||
				row[4].Null || !(row[4].Float <= row[1].Float && row[1].Float <= row[5].Float) {
				t.Errorf("with intervals: columns %+v row %+v", res.Columns, row)
			}
		})
	}
}

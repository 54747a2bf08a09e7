package proxy

import (
	"context"
	"strings"
	"testing"

	"countwall/ir"
)

// The statistical offices' mechanisms answer SUM and AVG end to end over a
// column with declared bounds: a value is clamped, NULL when withheld, the
// notice the counts use, and EXPLAIN states the rules.
func TestSumsUnderStatisticalMechanisms(t *testing.T) {
	f := newFixture(t, 50)
	for _, name := range []string{"suppress", "cellkey", "bounded", "layered"} {
		t.Run(name, func(t *testing.T) {
			cfg := f.config(t, name, nil)
			// income is 1000*(i%50): at most 49,000, clamped to 40,000.
			table := cfg.Tables["people"]
			table.ValueBounds = map[string]ir.ValueBounds{"income": {Min: 0, Max: 40000}}
			cfg.Tables["people"] = table
			e, err := Open(context.Background(), cfg, Options{NoiseSeed: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			res, err := e.Query(context.Background(), "alice", "SELECT sex, SUM(income), AVG(income), COUNT(*) FROM people GROUP BY sex")
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != 2 {
				t.Fatalf("rows %+v", res.Rows)
			}
			// F (odd i): 625,000, of which 41,000..49,000 lose 25,000 to the clamp.
			if name == "suppress" && (res.Rows[0][1].Text != "600000" || res.Rows[0][3].Int != 25) {
				t.Errorf("suppress: F row %+v, want the clamped sum 600000 of 25", res.Rows[0])
			}
			for _, row := range res.Rows {
				if !row[1].Null && row[2].Null {
					t.Errorf("a sum without its average: %+v", row)
				}
			}
			ex, err := e.Query(context.Background(), "alice", "EXPLAIN SELECT sex, SUM(income) FROM people GROUP BY sex")
			if err != nil {
				t.Fatal(err)
			}
			text := explainText(ex)
			if !strings.Contains(text, "clamped to its column's bounds") {
				t.Errorf("EXPLAIN does not state the clamping:\n%s", text)
			}
			if name == "suppress" && !strings.Contains(text, "dominance") {
				t.Errorf("EXPLAIN does not state the magnitude rules:\n%s", text)
			}
		})
	}
}

// explainText is a result's rows as text, one per line.
func explainText(res *Result) string {
	var sb strings.Builder
	for _, row := range res.Rows {
		for _, v := range row {
			sb.WriteString(v.Text + " ")
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

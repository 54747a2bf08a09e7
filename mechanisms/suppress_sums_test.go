package mechanisms

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
)

// sumQuery is SUM(v) grouped by the given columns.
func sumQuery(groupBy ...string) *ir.Query {
	return &ir.Query{Table: "t", GroupBy: groupBy,
		Aggregates: []ir.Aggregate{{Func: ir.FuncCount, Alias: "count"}, {Func: ir.FuncSum, Column: "v", Alias: "sum", Position: 1}}}
}

// magCell is a cell of count rows whose summed column has the given per-unit
// contributions and, beside them, rest from rows without a unit.
func magCell(group string, count int64, rest float64, contributions ...float64) ir.Cell {
	total := rest
	for _, c := range contributions {
		total += c
	}
	var g []ir.GroupValue
	for _, v := range strings.Split(group, ",") {
		if v != "" {
			g = append(g, ir.GroupValue{Text: v})
		}
	}
	return ir.Cell{Group: g, Count: count, Units: int64(len(contributions)), InDomain: true,
		Sums: []ir.SumValue{{N: count, Float: total, Clamped: total, Contributions: slices.Clone(contributions)}}}
}

// sumsRequest is a request over cells for q.
func sumsRequest(q *ir.Query, cells ...ir.Cell) *Request {
	return &Request{Query: q, Result: &ir.Result{Cells: cells}}
}

// renderSums writes answers as "W" (withheld), "D" (dropped) or count:sum.
func renderSums(answers []Answer) string {
	var parts []string
	for _, a := range answers {
		switch {
		case a.Dropped:
			parts = append(parts, "D")
		case a.Suppressed:
			if a.Sums != nil {
				parts = append(parts, "W with sums")
			} else {
				parts = append(parts, "W")
			}
		case a.Sums == nil:
			parts = append(parts, fmt.Sprintf("%d:nosums", a.Int))
		case a.Sums.Columns[0].Int != nil:
			parts = append(parts, fmt.Sprintf("%d:%s", a.Int, a.Sums.Columns[0].Int))
		default:
			parts = append(parts, fmt.Sprintf("%d:%g", a.Int, a.Sums.Columns[0].Float))
		}
	}
	return strings.Join(parts, " ")
}

func TestSuppressMagnitudeRules(t *testing.T) {
	tests := []struct {
		name  string
		p     Params
		q     *ir.Query
		cells []ir.Cell
		want  string
	}{
		{"(2, 85) dominance: 95% withheld, 80% published", nil, sumQuery(),
			[]ir.Cell{magCell("", 20, 0, 90, 5, 3, 2)}, "W"},
		{"published when no rule is broken", nil, sumQuery(),
			[]ir.Cell{magCell("", 20, 0, 50, 30, 10, 10)}, "20:100"},
		{"dominance at exactly k% is published", Params{"p_percent": 0}, sumQuery(),
			[]ir.Cell{magCell("", 20, 0, 50, 35, 15)}, "20:100"},
		{"(1, 50) dominance", Params{"dominance_n": 1, "dominance_k": 50, "p_percent": 0}, sumQuery(),
			[]ir.Cell{magCell("", 20, 0, 51, 49), magCell("", 20, 0, 50, 50)}, "W 20:100"},
		{"p% rule: 5 left < 10% of 60 withheld, 10 left published", Params{"dominance_k": 100}, sumQuery(),
			[]ir.Cell{magCell("", 20, 0, 60, 35, 3, 2)}, "W"},
		{"p% rule: 10 left >= 6 published", Params{"dominance_k": 100}, sumQuery(),
			[]ir.Cell{magCell("", 20, 0, 60, 30, 5, 5)}, "20:100"},
		{"p = 20 withholds what p = 10 publishes", Params{"dominance_k": 100, "p_percent": 20}, sumQuery(),
			[]ir.Cell{magCell("", 20, 0, 60, 30, 5, 5)}, "W"},
		{"one contributor breaks both rules", nil, sumQuery(),
			[]ir.Cell{magCell("", 20, 0, 7)}, "W"},
		{"rows without a unit are one more contributor", nil, sumQuery(),
			[]ir.Cell{magCell("", 20, 30, 40, 30), magCell("", 20, 5, 40, 30)}, "20:100 W"},
		{"negative contributions read in absolute value", nil, sumQuery(),
			[]ir.Cell{magCell("", 20, 0, -90, 5, 5)}, "W"},
		{"an all-zero cell is published", nil, sumQuery(),
			[]ir.Cell{magCell("", 20, 0, 0, 0, 0)}, "20:0"},
		{"count threshold still applies", Params{"threshold": 3}, sumQuery(),
			[]ir.Cell{magCell("", 3, 0, 10, 10, 10)}, "W"},
		{"rules off: one contributor published", Params{"dominance_k": 100, "p_percent": 0, "threshold": 0}, sumQuery(),
			[]ir.Cell{magCell("", 1, 0, 7)}, "1:7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMechanismForTest(t, "suppress", tt.p, 0)
			if got := renderSums(answerWithoutCharge(t, m, sumsRequest(tt.q, tt.cells...))); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSuppressSecondary(t *testing.T) {
	dominated := func(g string) ir.Cell { return magCell(g, 20, 0, 90, 5, 5) } // magnitude 100
	even := func(g string, each float64) ir.Cell { return magCell(g, 20, 0, each, each, each) }
	tests := []struct {
		name  string
		p     Params
		q     *ir.Query
		cells []ir.Cell
		want  string
	}{
		{"a lone withheld cell takes the smallest at least as large", nil, sumQuery("g"),
			[]ir.Cell{dominated("a"), even("b", 20), even("c", 50), even("d", 100)}, "W 20:60 W 20:300"},
		{"none as large: the largest", nil, sumQuery("g"),
			[]ir.Cell{dominated("a"), even("b", 20), even("c", 10)}, "W W 20:30"},
		{"two withheld need no complement", nil, sumQuery("g"),
			[]ir.Cell{dominated("a"), dominated("b"), even("c", 50)}, "W W 20:150"},
		{"a count withheld by the threshold takes a complement too", Params{"threshold": 5}, sumQuery("g"),
			[]ir.Cell{magCell("a", 4, 0, 1, 1, 1, 1), even("b", 20), even("c", 50)}, "W W 20:150"},
		{"off: the margin would give the lone cell", Params{"secondary_suppression": false}, sumQuery("g"),
			[]ir.Cell{dominated("a"), even("b", 20)}, "W 20:60"},
		{"drop mode drops the complement", Params{"mode": "drop"}, sumQuery("g"),
			[]ir.Cell{dominated("a"), even("b", 40), even("c", 50)}, "D D 20:150"},
		// WHERE g IN ('a', 'b') GROUP BY g over a declared domain a..d:
		// c and d are empty by the WHERE, withheld by the threshold, and
		// hide nothing (the margin minus b would be a), so b is withheld.
		{"empty cells do not hide a lone withheld cell", nil, sumQuery("g"),
			[]ir.Cell{dominated("a"), even("b", 50), magCell("c", 0, 0), magCell("d", 0, 0)}, "W W W W"},
		{"an empty cell is never the complement", nil, sumQuery("g"),
			[]ir.Cell{dominated("a"), magCell("b", 0, 0), even("c", 50)}, "W W W"},
		{"without GROUP BY there is no line", nil, sumQuery(),
			[]ir.Cell{dominated("")}, "W"},
		// A 2x3 table: (x,1) is dominated. Column 1 takes (y,1), its only
		// other cell; row x takes (x,2), the smallest as large (x,3 is
		// smaller); row y then has (y,1) alone and takes (y,2); every line
		// then has none or two.
		{"two group columns: every row and column", nil, sumQuery("a", "b"),
			[]ir.Cell{dominated("x,1"), even("x,2", 40), even("x,3", 30), even("y,1", 50), even("y,2", 60), even("y,3", 70)},
			"W W 20:90 W W 20:210"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMechanismForTest(t, "suppress", tt.p, 0)
			if got := renderSums(answerWithoutCharge(t, m, sumsRequest(tt.q, tt.cells...))); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSuppressSumsPublishClamped(t *testing.T) {
	m := newMechanismForTest(t, "suppress", Params{"threshold": 0, "dominance_k": 100, "p_percent": 0}, 0)
	c := ir.Cell{Count: 3, InDomain: true, Sums: []ir.SumValue{{N: 3, Int: big.NewInt(1_000_007), Clamped: 1007, Contributions: []float64{1000, 5, 2}}}}
	got := answerWithoutCharge(t, m, sumsRequest(sumQuery(), c))
	if s := got[0].Sums.Columns[0]; s.Int.Int64() != 1007 || s.N != 3 || s.Contributions != nil {
		t.Errorf("published %+v, want the clamped sum 1007 of 3 values and no contributions", s)
	}
	// No value: SUM is NULL (N = 0) whatever the count.
	c = ir.Cell{Count: 30, InDomain: true, Sums: []ir.SumValue{{Int: new(big.Int)}}}
	if s := answerWithoutCharge(t, m, sumsRequest(sumQuery(), c))[0].Sums.Columns[0]; s.N != 0 {
		t.Errorf("a cell without values published %+v", s)
	}
}

func TestClampingMechanismsRefuseUnboundedSums(t *testing.T) {
	bounds := ir.ValueBounds{Min: 0, Max: 10}
	table := &ir.Table{Name: "t", Columns: map[string]*ir.Column{"v": {Name: "v", Type: ir.TypeInt}, "w": {Name: "w", Type: ir.TypeInt, Bounds: &bounds}}}
	for _, name := range []string{"suppress", "cellkey", "bounded", "layered"} {
		m := newMechanismForTest(t, name, nil, 1)
		if !AnswersSums(m) || !ClampsSums(m) {
			t.Errorf("%s: answers sums %v, clamps %v", name, AnswersSums(m), ClampsSums(m))
		}
		_, err := Price(m, &Request{Query: sumQuery(), Table: table})
		if pgerror.SQLState(err) != pgerror.FeatureNotSupported || !strings.Contains(err.Error(), "bounds") {
			t.Errorf("%s: SUM over a column without bounds: %v", name, err)
		}
		q := sumQuery()
		q.Aggregates[1].Column = "w"
		if _, err := Price(m, &Request{Query: q, Table: table}); err != nil {
			t.Errorf("%s: SUM over a bounded column refused: %v", name, err)
		}
	}
}

package risk

import (
	"fmt"
	"strings"

	"countwall/proxy/state/release"
)

// The tests' releases carry the structured record the Engine writes into
// the audit (release.Query), built here by hand with release's
// constructors: a NOT around one comparison is written folded, as the
// planner folds it (NOT (income < 10000) is income >= 10000).

// num and str are a number and a string constant.
func num(text string) release.Constant { return release.Constant{Text: text} }
func str(text string) release.Constant { return release.Constant{Text: text, String: true} }

// numf is the number n.
func numf(n int64) release.Constant { return num(fmt.Sprint(n)) }

func eq(col string, v release.Constant) release.Conjunct {
	return release.Compare(col, release.OpEq, v)
}
func ne(col string, v release.Constant) release.Conjunct {
	return release.Compare(col, release.OpNe, v)
}
func lt(col string, v release.Constant) release.Conjunct {
	return release.Compare(col, release.OpLt, v)
}
func le(col string, v release.Constant) release.Conjunct {
	return release.Compare(col, release.OpLe, v)
}
func gt(col string, v release.Constant) release.Conjunct {
	return release.Compare(col, release.OpGt, v)
}
func ge(col string, v release.Constant) release.Conjunct {
	return release.Compare(col, release.OpGe, v)
}

func between(col string, lo, hi release.Constant) release.Conjunct {
	return release.Between(col, false, lo, hi)
}

func in(col string, vs ...release.Constant) release.Conjunct { return release.In(col, false, vs) }

// nots is NOT (cs...), a negated conjunction the planner keeps as written.
func nots(cs ...release.Conjunct) release.Conjunct { return release.Not(cs) }

func or(cs ...release.Conjunct) release.Conjunct { return release.Or(cs) }

// count is SELECT COUNT(*) FROM table WHERE where...
func count(table string, where ...release.Conjunct) *release.Query {
	return &release.Query{Table: table, Where: where}
}

// above makes q COUNT(*) > b.
func above(b int64, q *release.Query) *release.Query {
	atLeast := b + 1
	q.AtLeast = &atLeast
	return q
}

// grouped makes q GROUP BY cols.
func grouped(q *release.Query, cols ...string) *release.Query {
	q.GroupBy = cols
	return q
}

// ask is one answered statement: its query and the value sent (one cell).
func ask(id int64, analyst, mech string, q *release.Query, value float64) release.Release {
	r := release.Release{ID: id, Analyst: analyst, Kind: "query", Mechanism: mech, Outcome: "answered", Shape: shapeOf(q), Query: q,
		Cells: []release.Cell{{Value: value, IsFloat: mech == "idp" || mech == "bdp"}}}
	if mech == "idp" || mech == "bdp" {
		r.Epsilon = 1e-10
	}
	return r
}

// shapeOf stands for the statement's shape, which the audit keeps beside
// the query: what it asks with the constants left out.
func shapeOf(q *release.Query) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q %t:", q.Table, q.GroupBy, q.AtLeast != nil)
	var form func(cs []release.Conjunct)
	form = func(cs []release.Conjunct) {
		for _, c := range cs {
			fmt.Fprintf(&b, " %q %s %d (", c.Column, c.Op, len(c.Values))
			form(c.Inner)
			b.WriteString(")")
		}
	}
	form(q.Where)
	return b.String()
}

// conds are conditions as the solvers hold them.
func conds(cs ...release.Conjunct) []*release.Conjunct {
	out := make([]*release.Conjunct, len(cs))
	for i := range cs {
		out[i] = &cs[i]
	}
	return out
}

package proxy

import (
	"fmt"
	"math"
	"strconv"

	"countwall/ir"
	"countwall/pglex"
	"countwall/planner/plan"
	"countwall/proxy/state/release"
)

// releaseQuery is what the audit keeps of an answered query's meaning: the
// validated query itself, so that no reader of the audit (the risk solvers,
// the monitor) reads SQL text again. bounds are the contribution bounds the
// answer was computed under, nil when the mechanism bounds none.
//
// The WHERE clause is split at its top-level ANDs, in the order written. A
// NOT is pushed onto the condition it negates when that condition has a
// negated form (NOT (age < 30) is age >= 30, NULL included, by SQL's
// three-valued logic, as plan.Conditions reads it); a NOT of an AND or an
// OR stays a release.Not. The values are the planner's typed literals, so
// 30.0 compared with an integer column reads 30.
func releaseQuery(q *ir.Query, bounds *ir.Bounds) *release.Query {
	out := &release.Query{Table: q.Table, GroupBy: q.GroupBy, Distinct: q.Agg == ir.CountDistinct}
	if q.Threshold != nil {
		// The answer 1 says count > Bound, count >= Bound+1; a bound at the
		// top of the range is never passed and stays there.
		at := q.Threshold.Bound
		if at < math.MaxInt64 {
			at++
		}
		out.AtLeast = &at
	}
	if q.HasSums() {
		out.Aggregates = releaseAggregates(q)
	}
	if bounds != nil {
		out.Bounds = &release.Bounds{MaxRowsPerUnit: bounds.MaxRowsPerUnit, MaxGroupsPerUnit: bounds.MaxGroupsPerUnit}
	}
	if q.Where != nil {
		out.Where = conjuncts(make([]release.Conjunct, 0, topConjuncts(q.Where)), q.Where, false)
	}
	return out
}

// conjuncts appends p's conjuncts to out; neg says p stands under a NOT.
func conjuncts(out []release.Conjunct, p ir.Pred, neg bool) []release.Conjunct {
	switch p := p.(type) {
	case *ir.And:
		if neg {
			return append(out, release.Not(conjuncts(conjuncts(nil, p.Left, false), p.Right, false)))
		}
		return conjuncts(conjuncts(out, p.Left, false), p.Right, false)
	case *ir.Or:
		or := release.Or(alternatives(alternatives(nil, p.Left), p.Right))
		if neg {
			return append(out, release.Not([]release.Conjunct{or}))
		}
		return append(out, or)
	case *ir.Not:
		return conjuncts(out, p.Inner, !neg)
	case ir.Derived:
		return conjuncts(out, p.Lower(), neg)
	}
	return append(out, condition(p, neg))
}

// topConjuncts is how many conjuncts p's top-level ANDs make, so that
// they are allocated once: a reconstruction's statement holds a dozen.
func topConjuncts(p ir.Pred) int {
	if and, ok := p.(*ir.And); ok {
		return topConjuncts(and.Left) + topConjuncts(and.Right)
	}
	return 1
}

// alternatives appends p's alternatives to out: an OR's own, flattened, or
// p itself, a conjunction of several conditions made one release.And.
func alternatives(out []release.Conjunct, p ir.Pred) []release.Conjunct {
	if or, ok := p.(*ir.Or); ok {
		return alternatives(alternatives(out, or.Left), or.Right)
	}
	cs := conjuncts(nil, p, false)
	if len(cs) == 1 {
		return append(out, cs[0])
	}
	return append(out, release.And(cs))
}

// condition is one comparison, negated when neg.
func condition(p ir.Pred, neg bool) release.Conjunct {
	switch p := p.(type) {
	case *ir.Compare:
		op, folded := comparisonOp(p.Op, neg)
		c := release.Compare(p.Column, op, constantOf(p.Value))
		if neg && !folded {
			return release.Not([]release.Conjunct{c})
		}
		return c
	case *ir.MathCompare:
		op, folded := comparisonOp(p.Op, neg)
		c := release.Expr(ir.ExprColumn(p.Expr), plan.ExprText(p.Expr, pglex.QuoteIdent), op, constantOf(p.Value))
		if neg && !folded {
			return release.Not([]release.Conjunct{c})
		}
		return c
	case *ir.Between:
		return release.Between(p.Column, p.Negate != neg, constantOf(p.Lo), constantOf(p.Hi))
	case *ir.In:
		values := make([]release.Constant, len(p.Values))
		for i, v := range p.Values {
			values[i] = constantOf(v)
		}
		return release.In(p.Column, p.Negate != neg, values)
	case *ir.IsNull:
		return release.IsNull(p.Column, p.Negate != neg)
	case *ir.Like:
		op := release.OpLike
		if p.Negate != neg {
			op = release.OpNotLike
		}
		return release.Compare(p.Column, op, release.Constant{Text: p.Pattern, String: true})
	}
	// Every kind ir defines is above (the set is closed but for Derived,
	// lowered before this); the text says so rather than pass for another.
	return release.Conjunct{Op: release.Op(fmt.Sprintf("%T", p)), Text: fmt.Sprintf("unknown condition %T", p)}
}

// comparisonOp is op as the release spells it, folded into its opposite
// when neg; folded is false when op has none.
func comparisonOp(op string, neg bool) (release.Op, bool) {
	if op == "!=" {
		op = "<>"
	}
	if !neg {
		return release.Op(op), true
	}
	inv, ok := plan.NegatedOp(op)
	if !ok {
		return release.Op(op), false
	}
	return release.Op(inv), true
}

// constantOf is a typed literal as the release keeps it: an integer in
// decimal, a real number in the shortest text that reads back as it (30.0
// is 30), text as a string. A real number that is not finite is the
// string PostgreSQL reads it from ('NaN', 'Infinity').
func constantOf(l ir.Literal) release.Constant {
	switch l.Kind {
	case ir.LitInt:
		return release.Constant{Text: strconv.FormatInt(l.Int, 10)}
	case ir.LitFloat:
		switch {
		case math.IsNaN(l.Float):
			return release.Constant{Text: "NaN", String: true}
		case math.IsInf(l.Float, 1):
			return release.Constant{Text: "Infinity", String: true}
		case math.IsInf(l.Float, -1):
			return release.Constant{Text: "-Infinity", String: true}
		}
		return release.Constant{Text: strconv.FormatFloat(l.Float, 'g', -1, 64)}
	}
	return release.Constant{Text: l.Text, String: true}
}

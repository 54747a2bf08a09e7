package plan

import (
	"cmp"
	"countwall/ir"
	"slices"
	"strconv"
	"strings"
)

// Conditions is the normalised condition list of a query's WHERE clause, the
// seed material of layered (Diffix-style) noise: one canonical string per leaf
// predicate, sorted, duplicates removed. Textually different but equivalent
// queries (other order, spacing, case, IN order, NOT written outside or folded
// in) give the same list:
//
//	age = 30                   sex IN ('F', 'M')      age BETWEEN 20 AND 29
//	suburb NOT LIKE 'A%'       income IS NOT NULL     abs(age - 40) < 5
//
// NOT is pushed down to the leaves (De Morgan), where it becomes the negated
// form of the leaf: NOT (age < 30) is age >= 30, which SQL's three-valued logic
// makes an equivalence, NULL included. A one-value IN is an equality.
func Conditions(q *ir.Query) []string {
	if q == nil || q.Where == nil {
		return []string{}
	}
	var out []string
	collectConditions(q.Where, false, &out)
	slices.Sort(out)
	return slices.Compact(out)
}

// negatedOps gives the comparison that is true exactly when op is false (and
// unknown exactly when op is unknown).
var negatedOps = map[string]string{
	"=": "<>", "<>": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">",
}

// NegatedOp is the comparison that holds exactly where NOT (x op v) holds,
// NULL included (SQL's three-valued logic makes NOT (age < 30) and
// age >= 30 one condition); false for an operator without one. != reads
// as <>.
func NegatedOp(op string) (string, bool) {
	inv, ok := negatedOps[canonicalOp(op)]
	return inv, ok
}

func canonicalOp(op string) string {
	if op == "!=" {
		return "<>"
	}
	return op
}

func collectConditions(p ir.Pred, neg bool, out *[]string) {
	switch p := p.(type) {
	case *ir.And:
		collectConditions(p.Left, neg, out)
		collectConditions(p.Right, neg, out)
	case *ir.Or:
		collectConditions(p.Left, neg, out)
		collectConditions(p.Right, neg, out)
	case *ir.Not:
		collectConditions(p.Inner, !neg, out)
	case *ir.Compare:
		*out = append(*out, canonicalCompare(canonicalColumn(p.Column), p.Op, neg, p.Value))
	case *ir.MathCompare:
		*out = append(*out, canonicalCompare(canonicalExpr(p.Expr, true), p.Op, neg, p.Value))
	case *ir.Between:
		kw := " BETWEEN "
		if p.Negate != neg {
			kw = " NOT BETWEEN "
		}
		*out = append(*out, canonicalColumn(p.Column)+kw+canonicalLiteral(p.Lo)+" AND "+canonicalLiteral(p.Hi))
	case *ir.In:
		*out = append(*out, canonicalIn(p, p.Negate != neg))
	case *ir.IsNull:
		if p.Negate != neg {
			*out = append(*out, canonicalColumn(p.Column)+" IS NOT NULL")
		} else {
			*out = append(*out, canonicalColumn(p.Column)+" IS NULL")
		}
	case ir.Derived:
		collectConditions(p.Lower(), neg, out)
	case *ir.Like:
		kw := " LIKE "
		if p.Negate != neg {
			kw = " NOT LIKE "
		}
		*out = append(*out, canonicalColumn(p.Column)+kw+quoteText(p.Pattern))
	}
}

func canonicalCompare(lhs, op string, neg bool, v ir.Literal) string {
	op = canonicalOp(op)
	if neg {
		if inv, ok := negatedOps[op]; ok {
			op = inv
		} else {
			return "NOT (" + lhs + " " + op + " " + canonicalLiteral(v) + ")"
		}
	}
	return lhs + " " + op + " " + canonicalLiteral(v)
}

func canonicalIn(p *ir.In, negate bool) string {
	vals := slices.Clone(p.Values)
	slices.SortFunc(vals, compareLiterals)
	vals = slices.CompactFunc(vals, func(a, b ir.Literal) bool { return compareLiterals(a, b) == 0 })
	col := canonicalColumn(p.Column)
	if len(vals) == 1 {
		return canonicalCompare(col, "=", negate, vals[0])
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = canonicalLiteral(v)
	}
	kw := " IN ("
	if negate {
		kw = " NOT IN ("
	}
	return col + kw + strings.Join(parts, ", ") + ")"
}

// compareLiterals orders numbers numerically before text, text bytewise, as
// SQLite orders values.
func compareLiterals(a, b ir.Literal) int {
	an, bn := a.Kind != ir.LitText, b.Kind != ir.LitText
	switch {
	case an && bn:
		if a.Kind == ir.LitInt && b.Kind == ir.LitInt {
			return cmp.Compare(a.Int, b.Int)
		}
		return cmp.Compare(literalFloat(a), literalFloat(b))
	case an:
		return -1
	case bn:
		return 1
	default:
		return strings.Compare(a.Text, b.Text)
	}
}

func literalFloat(l ir.Literal) float64 {
	if l.Kind == ir.LitInt {
		return float64(l.Int)
	}
	return l.Float
}

// canonicalLiteral renders a literal the same way however it was typed: 30,
// 30.0 and 3e1 are all 30; text is single-quoted with quotes doubled.
func canonicalLiteral(l ir.Literal) string {
	switch l.Kind {
	case ir.LitInt:
		return strconv.FormatInt(l.Int, 10)
	case ir.LitFloat:
		return strconv.FormatFloat(l.Float, 'g', -1, 64)
	default:
		return quoteText(l.Text)
	}
}

func quoteText(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func canonicalColumn(name string) string { return strings.ToLower(name) }

func canonicalExpr(e ir.Expr, top bool) string { return exprText(e, top, canonicalColumn) }

// ExprText is the planner's one rendering of a validated arithmetic
// expression: each column as name renders it, numbers as canonicalLiteral
// writes them (30, 30.0 and 3e1 are all 30), function names in lower case,
// and every operation below the top in parentheses, so that the text reads
// back as the tree it came from.
func ExprText(e ir.Expr, name func(column string) string) string { return exprText(e, true, name) }

func exprText(e ir.Expr, top bool, name func(string) string) string {
	switch e := e.(type) {
	case *ir.ColumnRef:
		return name(e.Column)
	case *ir.NumberLit:
		return canonicalLiteral(e.Value)
	case *ir.BinaryExpr:
		s := exprText(e.Left, false, name) + " " + e.Op + " " + exprText(e.Right, false, name)
		if top {
			return s
		}
		return "(" + s + ")"
	case *ir.FuncCall:
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			args[i] = exprText(a, true, name)
		}
		return strings.ToLower(e.Name) + "(" + strings.Join(args, ", ") + ")"
	default:
		return "?"
	}
}

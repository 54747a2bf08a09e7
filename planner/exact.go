package planner

import (
	"countwall/ir"
	"math"
	"math/big"
	"slices"
)

// PostgreSQL compares an integer column with a decimal constant exactly
// (integer against numeric), while SQLite would compare it with the nearest
// float64: `age = 30.00000000000000000001` matches no row in PostgreSQL and
// every 30-year-old after rounding, and `age = 1e-400` every 0. A decimal
// compared with an integer column is therefore kept as its exact value and
// each comparison is rewritten into the integer comparison that selects the
// same rows: `age > 29.9999...` is `age >= 30`, `age = 30.5` is false, and a
// bound beyond the int64 range compares as every value or none.

// exactDecimal is a decimal literal's exact value, for an integer column; ok
// is false when the literal is not a decimal (an integer literal, text).
func exactDecimal(l ir.Literal) (*big.Rat, bool) {
	if !isDecimal(l) {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(l.Text)
	return r, ok
}

// isDecimal reports whether l is a number kept as its decimal text.
func isDecimal(l ir.Literal) bool { return l.Kind == ir.LitFloat && l.Text != "" }

var (
	minInt64 = new(big.Int).SetInt64(math.MinInt64)
	maxInt64 = new(big.Int).SetInt64(math.MaxInt64)
)

// integerBound is the integer a lower (ceil) or upper (floor) bound on an
// integer column comes to; below or above tells that it lies past the
// int64 range on that side (every value, or none, is within it).
func integerBound(r *big.Rat, ceil bool) (n int64, below, above bool) {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	// QuoRem truncates toward zero: adjust to floor or ceil.
	if m.Sign() != 0 {
		if ceil && r.Sign() > 0 {
			q.Add(q, big.NewInt(1))
		}
		if !ceil && r.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		}
	}
	switch {
	case q.Cmp(minInt64) < 0:
		return 0, true, false
	case q.Cmp(maxInt64) > 0:
		return 0, false, true
	}
	return q.Int64(), false, false
}

// never and always are what a comparison of integer column col comes to
// when its value lies outside every integer or between two: it holds for no
// integer, or for every one (see threevalued.go: unknown where col is NULL).
func never(col string) ir.Pred  { return falseUnlessNull(col, ir.TypeInt) }
func always(col string) ir.Pred { return trueUnlessNull(col, ir.TypeInt) }

func exactInt(n int64) ir.Literal { return ir.Literal{Kind: ir.LitInt, Int: n} }

// exactCompare rewrites `col op decimal` on an integer column.
func exactCompare(col, op string, r *big.Rat) ir.Pred {
	if r.IsInt() {
		n, below, above := integerBound(r, false)
		switch {
		case !below && !above:
			return &ir.Compare{Column: col, Op: op, Value: exactInt(n)}
		case op == "=":
			return never(col)
		case op == "<>":
			return always(col)
		case (op == "<" || op == "<=") == above:
			return always(col)
		default:
			return never(col)
		}
	}
	switch op {
	case "=":
		return never(col)
	case "<>":
		return always(col)
	case "<", "<=":
		n, below, above := integerBound(r, false)
		return boundCompare(col, "<=", n, below, above)
	default: // ">", ">="
		n, below, above := integerBound(r, true)
		return boundCompare(col, ">=", n, below, above)
	}
}

// boundCompare is `col op n` for op <= or >=, where n may lie past the int64
// range.
func boundCompare(col, op string, n int64, below, above bool) ir.Pred {
	switch {
	case below:
		if op == "<=" {
			return never(col)
		}
		return always(col)
	case above:
		if op == ">=" {
			return never(col)
		}
		return always(col)
	}
	return &ir.Compare{Column: col, Op: op, Value: exactInt(n)}
}

// exactIn keeps the values of an IN list that an integer can equal; a list
// left empty matches no row (IN) or every non-NULL row (NOT IN).
func exactIn(in *ir.In) ir.Pred {
	if len(in.Values) > 0 && !slices.ContainsFunc(in.Values, isDecimal) {
		return in // integers all: nothing to rewrite
	}
	kept := in.Values[:0:0]
	for _, v := range in.Values {
		r, ok := exactDecimal(v)
		if !ok {
			kept = append(kept, v)
			continue
		}
		if n, below, above := integerBound(r, false); r.IsInt() && !below && !above {
			kept = append(kept, exactInt(n))
		}
	}
	switch {
	case len(kept) > 0:
		return &ir.In{Column: in.Column, Values: kept, Negate: in.Negate}
	case in.Negate:
		return always(in.Column)
	}
	return never(in.Column)
}

// exactBetween turns the bounds of a BETWEEN on an integer column into
// integers: lo up, hi down.
func exactBetween(b *ir.Between) ir.Pred {
	lo, hi := b.Lo, b.Hi
	var loBelow, hiAbove bool
	if r, ok := exactDecimal(lo); ok {
		n, below, above := integerBound(r, true)
		if above {
			return emptyRange(b)
		}
		lo, loBelow = exactInt(n), below
	}
	if r, ok := exactDecimal(hi); ok {
		n, below, above := integerBound(r, false)
		if below {
			return emptyRange(b)
		}
		hi, hiAbove = exactInt(n), above
	}
	switch {
	case loBelow && hiAbove:
		if b.Negate {
			return never(b.Column)
		}
		return always(b.Column)
	case loBelow:
		return negateIf(&ir.Compare{Column: b.Column, Op: "<=", Value: hi}, b.Negate)
	case hiAbove:
		return negateIf(&ir.Compare{Column: b.Column, Op: ">=", Value: lo}, b.Negate)
	}
	return &ir.Between{Column: b.Column, Lo: lo, Hi: hi, Negate: b.Negate}
}

func emptyRange(b *ir.Between) ir.Pred {
	if b.Negate {
		return always(b.Column)
	}
	return never(b.Column)
}

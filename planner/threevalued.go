package planner

import "countwall/ir"

// A comparison whose outcome the statement alone decides (`age = 30.5` on
// an integer column, `age < 1e400`, `score > 'NaN'`) is still a
// comparison: where the column is NULL it is unknown, not false, so its
// NOT is unknown there too and counts no NULL row, as in PostgreSQL.
// Folding it to IS NULL / IS NOT NULL would be two-valued and wrong under
// NOT: `NOT (age = 30.5)` would count the NULL ages.
//
// Both are written as comparisons of the column with a value of its own
// type, so every backend evaluates them as it evaluates any comparison,
// with SQL's three-valued logic and no predicate kind of their own. The
// values of one column are totally ordered on every backend, so no value
// is both below and above z, and every value is at most z or above it:
// SQLite orders integers, reals, text and blobs of one column together
// (numbers first), and PostgreSQL orders NaN above every other double.

// falseUnlessNull is a comparison of col that holds for no value: false,
// or unknown where col is NULL.
func falseUnlessNull(col string, t ir.ColumnType) ir.Pred {
	z := zeroOf(t)
	return &ir.And{
		Left:  &ir.Compare{Column: col, Op: "<", Value: z},
		Right: &ir.Compare{Column: col, Op: ">", Value: z},
	}
}

// trueUnlessNull is a comparison of col that holds for every value: true,
// or unknown where col is NULL.
func trueUnlessNull(col string, t ir.ColumnType) ir.Pred {
	z := zeroOf(t)
	return &ir.Or{
		Left:  &ir.Compare{Column: col, Op: "<=", Value: z},
		Right: &ir.Compare{Column: col, Op: ">", Value: z},
	}
}

// decided is trueUnlessNull when holds, else falseUnlessNull.
func decided(col string, t ir.ColumnType, holds bool) ir.Pred {
	if holds {
		return trueUnlessNull(col, t)
	}
	return falseUnlessNull(col, t)
}

// zeroOf is a value of a column type to compare the column with.
func zeroOf(t ir.ColumnType) ir.Literal {
	switch t {
	case ir.TypeReal:
		return ir.Literal{Kind: ir.LitFloat}
	case ir.TypeText:
		return ir.Literal{Kind: ir.LitText}
	}
	return ir.Literal{Kind: ir.LitInt}
}

func negateIf(p ir.Pred, negate bool) ir.Pred {
	if negate {
		return &ir.Not{Inner: p}
	}
	return p
}

// A comparison with NULL (`sex = NULL`, `age = $1` bound NULL, the NULL
// of `IN ('F', NULL)` or of a BETWEEN's end) is unknown for every row,
// NULL or not. WHERE keeps the rows where the whole condition is true, and
// AND, OR and NOT are monotone in each comparison (NOT reversing it), so
// under an even number of NOTs an unknown comparison keeps exactly the
// rows false would, and under an odd number exactly those true would. It
// is read as that, as the = ANY rewrite reads a NULL element
// (quantified.go): a condition of the column's own, charged and audited as
// what it means.

// unknown is a comparison of col with NULL read under negated (an odd
// number of NOTs): false unless col is NULL, or true unless col is NULL,
// whose NULL rows stay unknown as they are.
func unknown(col string, t ir.ColumnType, negated bool) ir.Pred {
	return decided(col, t, negated)
}

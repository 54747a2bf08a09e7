package planner

import (
	"countwall/ir"
	"countwall/pgerror"
	"math"
)

// An arithmetic condition is typed as PostgreSQL types it over the same
// table (integer columns bigint, real columns double precision, text
// columns text), so that countwall computes what PostgreSQL computes or
// refuses the statement before any row is read:
//
//   - integer op integer is integer arithmetic: integer (32 bits) when both
//     sides are integer, else bigint; / truncates, and overflow is an error;
//   - double precision op any number is double precision (a constant is
//     cast to it);
//   - integer op decimal constant is numeric, which PostgreSQL computes
//     exactly and countwall does not compute: refused (0A000);
//   - % on double precision does not exist (42883);
//   - abs keeps its argument's type; round, floor and ceil of an integer
//     cast it to double precision, as PostgreSQL's function resolution
//     does; length is integer.

// mathType is the PostgreSQL type of a value in an arithmetic condition.
type mathType int

const (
	typeInt4    mathType = iota // integer: length(), integer constants within 32 bits
	typeInt8                    // bigint: integer columns, larger integer constants
	typeFloat8                  // double precision: real columns, round, floor, ceil
	typeNumeric                 // numeric: decimal constants, integer constants past 64 bits
	typeText
)

// String names the type as PostgreSQL's messages do.
func (t mathType) String() string {
	switch t {
	case typeInt4:
		return "integer"
	case typeInt8:
		return "bigint"
	case typeFloat8:
		return "double precision"
	case typeNumeric:
		return "numeric"
	}
	return "text"
}

func (t mathType) isInteger() bool { return t == typeInt4 || t == typeInt8 }

// integerLimits are the smallest and largest values of an integer type.
func (t mathType) integerLimits() (int64, int64) {
	if t == typeInt4 {
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// columnMathType is the type a column has in arithmetic.
func columnMathType(t ir.ColumnType) mathType {
	switch t {
	case ir.TypeInt:
		return typeInt8
	case ir.TypeReal:
		return typeFloat8
	}
	return typeText
}

// constantType is the type PostgreSQL gives a number constant written in the
// statement: integer within 32 bits, bigint within 64, numeric otherwise (a
// decimal, an exponent, or a larger integer).
func constantType(l ir.Literal) mathType {
	switch {
	case l.Kind == ir.LitInt && l.Int >= math.MinInt32 && l.Int <= math.MaxInt32:
		return typeInt4
	case l.Kind == ir.LitInt:
		return typeInt8
	case isDecimal(l):
		return typeNumeric
	}
	return typeFloat8
}

// arithmeticType is the type of l op r, or PostgreSQL's refusal of it
// (numeric, which countwall refuses after PostgreSQL's own refusals, is the
// caller's to refuse).
func arithmeticType(op string, l, r *mathTerm) (mathType, error) {
	switch {
	case l.typ == typeText || r.typ == typeText,
		op == "%" && (l.typ == typeFloat8 || r.typ == typeFloat8):
		return 0, pgerror.Errorf(pgerror.UndefinedFunction, "operator does not exist: %s %s %s", l.typ, op, r.typ)
	case l.typ == typeFloat8 || r.typ == typeFloat8:
		return typeFloat8, nil
	case l.typ == typeNumeric || r.typ == typeNumeric:
		return typeNumeric, nil
	case l.typ == typeInt4 && r.typ == typeInt4:
		return typeInt4, nil
	}
	return typeInt8, nil
}

// functionType is the type of an allowed function's result, or PostgreSQL's
// refusal of its argument's type.
func functionType(name string, arg *mathTerm) (mathType, error) {
	missing := pgerror.Errorf(pgerror.UndefinedFunction, "function %s(%s) does not exist", name, arg.typ)
	switch name {
	case "length":
		if arg.typ != typeText {
			return 0, missing
		}
		return typeInt4, nil
	case "lower", "upper":
		if arg.typ != typeText {
			return 0, missing
		}
		return typeText, nil
	}
	// abs, round, floor, ceil
	switch {
	case arg.typ == typeText:
		return 0, missing
	case arg.typ == typeNumeric:
		return 0, numericArithmetic(name+"("+arg.text+")", true)
	case name == "abs" && arg.typ.isInteger():
		return arg.typ, nil
	}
	return typeFloat8, nil
}

// numericArithmetic refuses arithmetic PostgreSQL computes in numeric, which
// is exact where countwall's SQLite would compute in floating point and
// answer another question (age * 0.1 = 0.3).
func numericArithmetic(text string, constantsOnly bool) error {
	if constantsOnly {
		return pgerror.Errorf(pgerror.FeatureNotSupported,
			"%s is computed in numeric by PostgreSQL; countwall does not compute numeric: write the result as one constant", text)
	}
	return pgerror.Errorf(pgerror.FeatureNotSupported,
		"%s is computed in numeric by PostgreSQL (a decimal constant in arithmetic on an integer); countwall does not compute numeric: "+
			"use integer constants, and compare the integer expression with a decimal if need be, which is exact "+
			"(age * 0.1 = 0.3 is age = 3; age / 4.0 > 2.5 is age > 10)", text)
}

// isConstantZero reports whether a term is a number constant equal to zero,
// a divisor PostgreSQL refuses on the first row it divides.
func isConstantZero(t *mathTerm) bool {
	n, ok := t.expr.(*ir.NumberLit)
	if !ok {
		return false
	}
	switch n.Value.Kind {
	case ir.LitInt:
		return n.Value.Int == 0
	case ir.LitFloat:
		if r, ok := exactDecimal(n.Value); ok {
			return r.Sign() == 0
		}
		return n.Value.Float == 0
	}
	return false
}

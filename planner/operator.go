package planner

import (
	"math"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/pgtypes"
)

// PostgreSQL chooses a comparison by the types of its two sides: a bigint
// column against an integer type compares integers, against numeric
// exactly, against real or double precision as doubles; a double
// precision column against any number type compares doubles; a text
// column against text, varchar, character (its padding dropped), name
// (cut to 63 bytes) or "char" (one byte) compares text. Any other pair has
// no operator (42883), decided from the statement before the data is read.

// columnType is a column's PostgreSQL type: the catalog's integer, real and
// text columns are bigint, double precision and text.
func columnType(t ir.ColumnType) pgtypes.OID {
	switch t {
	case ir.TypeInt:
		return pgtypes.Int8
	case ir.TypeReal:
		return pgtypes.Float8
	}
	return pgtypes.Text
}

// operatorName is an operator as PostgreSQL's messages spell it.
func operatorName(op string) string {
	switch op {
	case "!=":
		return "<>"
	case "like":
		return "~~"
	case "not like":
		return "!~~"
	}
	return op
}

// checkOperator refuses `col op o` (o's type settled) where PostgreSQL
// has no operator for the two types (42883), where its answer would
// depend on the rows (0A000: bigint against oid converts each value to oid,
// which fails outside 0..4294967295).
func (p *parser) checkOperator(col, op string, o operand) error {
	ct := columnType(p.table.Columns[col].Type)
	switch {
	case ct == pgtypes.Text && (textTypes[o.typ] || o.typ.IsInputless()), ct != pgtypes.Text && numberTypes[o.typ]:
		return nil // an inputless type converts to text, and its input refuses every value
	case ct == pgtypes.Int8 && o.typ.IsOIDAlias():
		return pgerror.Errorf(pgerror.FeatureNotSupported,
			"%s is of type %s, against which PostgreSQL converts each value of column %q to oid and fails on values outside 0..4294967295; countwall does not compare them",
			o.name(), o.typ.Name(), col)
	}
	err := pgerror.Errorf(pgerror.UndefinedFunction, "operator does not exist: %s %s %s: column %q is %s and %s is %s",
		ct.Name(), operatorName(op), o.typ.Name(), col, ct.Name(), o.name(), o.typ.Name())
	switch {
	case o.param > 0:
		return err.WithHint("Declare the parameter as " + ct.Name() + ", or leave its type unspecified for the column's.")
	case ct == pgtypes.Text:
		return err.WithHint("Quote the value to compare it as text.")
	}
	return err
}

// commonType is the type PostgreSQL converts an IN list's values to
// before it compares them with column col, as select_common_type chooses
// it: starting from the column's type, each value's type replaces it when
// that one converts to it implicitly but not back. Against a bigint that
// is the highest of bigint, numeric, real and double precision in the
// list (smallint and integer convert to bigint); against double precision
// it stays double precision (the preferred number type); against text,
// text. A list holding a type of another kind is compared value by value
// instead, where that value's comparison is refused by checkOperator.
func (p *parser) commonType(col string, ops []operand) pgtypes.OID {
	ct := columnType(p.table.Columns[col].Type)
	if ct != pgtypes.Int8 {
		return ct
	}
	common := ct
	for _, o := range ops {
		if r, ok := numberRank[o.typ]; ok && r > numberRank[common] {
			common = o.typ
		}
	}
	return common
}

// numberRank orders the types a bigint converts to implicitly: each
// converts to those ranked above it and not back (smallint and integer
// convert to bigint, so never replace it).
var numberRank = map[pgtypes.OID]int{pgtypes.Int8: 0, pgtypes.Numeric: 1, pgtypes.Float4: 2, pgtypes.Float8: 3}

// comparePred is `col op o`, as PostgreSQL compares them.
func (p *parser) comparePred(col, op string, o operand) (ir.Pred, error) {
	ct := p.table.Columns[col].Type
	p.settle(&o, columnType(ct))
	if err := p.checkOperator(col, op, o); err != nil {
		return nil, err
	}
	if o.null {
		return unknown(col, ct, p.negated), nil
	}
	v, err := o.read(col)
	if err != nil {
		return nil, err
	}
	switch ct {
	case ir.TypeInt:
		return integerCompare(col, op, edgesOf(v)), nil
	case ir.TypeReal:
		f, err := asFloat(v, o.what(col))
		if err != nil {
			return nil, err
		}
		return realCompare(col, op, f), nil
	}
	return &ir.Compare{Column: col, Op: op, Value: ir.Literal{Kind: ir.LitText, Text: v.s}}, nil
}

// edgesOf are where the integers meet a number value (see exact.go).
func edgesOf(v value) edges {
	switch v.kind {
	case numericValue:
		return numericEdges(v.num)
	case floatValue:
		return floatEdges(v.f)
	}
	gt := edge{n: v.i + 1}
	if v.i == math.MaxInt64 {
		gt = edge{none: true}
	}
	return edges{ge: edge{n: v.i}, gt: gt}
}

// realCompare is `col op f` on a double precision column. NaN, equal to
// itself and above every other double, is compared through the one value
// every backend holds: only NaN lies above +Infinity, and every other
// value at or below it. (SQLite holds no NaN; PostgreSQL may.)
func realCompare(col, op string, f float64) ir.Pred {
	inf := ir.Literal{Kind: ir.LitFloat, Float: math.Inf(1)}
	if !math.IsNaN(f) {
		return &ir.Compare{Column: col, Op: op, Value: ir.Literal{Kind: ir.LitFloat, Float: f}}
	}
	switch op {
	case "=", ">=":
		return &ir.Compare{Column: col, Op: ">", Value: inf}
	case "<", "<>":
		return &ir.Compare{Column: col, Op: "<=", Value: inf}
	case ">":
		return falseUnlessNull(col, ir.TypeReal)
	}
	return trueUnlessNull(col, ir.TypeReal) // <=
}

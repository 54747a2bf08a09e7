package planner

import (
	"math"

	"countwall/ir"
	"countwall/pgtypes"
)

// inPred is `col [NOT] IN (ops...)`, as PostgreSQL compares it: one value
// is `col = v` (`col <> v`); several are first converted to their common
// type (commonType), an unknown one read as that type, and each compared
// with the column. Values no row can equal drop out; a double that many
// integers convert to adds a run of them; NaN against a double adds the
// only value above +Infinity.
func (p *parser) inPred(col string, negate bool, ops []operand) (ir.Pred, error) {
	op := pick(negate, "<>", "=")
	if len(ops) == 1 {
		return p.comparePred(col, op, ops[0])
	}
	for _, o := range ops {
		if o.typ != pgtypes.Unknown {
			if err := p.checkOperator(col, op, o); err != nil {
				return nil, err
			}
		}
	}
	ct := p.table.Columns[col].Type
	common := p.commonType(col, ops)
	var nulls int
	if ops, nulls = p.dropNulls(ops, common); nulls > 0 {
		// A NULL element makes each non-match unknown (threevalued.go).
		switch positive := p.negated == negate; {
		case !positive:
			return negateIf(trueUnlessNull(col, ct), negate), nil
		case len(ops) == 0:
			return negateIf(falseUnlessNull(col, ct), negate), nil
		}
	}
	in := &ir.In{Column: col, Negate: negate, Values: make([]ir.Literal, 0, len(ops))}
	var others []ir.Pred
	for _, o := range ops {
		p.settle(&o, common)
		v, err := o.read(col)
		if err == nil {
			v, err = castValue(v, common, o.what(col))
		}
		if err != nil {
			return nil, err
		}
		lit, other, err := inValue(col, ct, v, o.what(col))
		if err != nil {
			return nil, err
		}
		if lit != nil {
			in.Values = append(in.Values, *lit)
		} else if other != nil {
			others = append(others, other)
		}
	}
	return joinIn(col, ct, in, others), nil
}

// dropNulls is ops without its NULLs, and how many there were; a NULL
// parameter's type settles as common, for the client's description.
func (p *parser) dropNulls(ops []operand, common pgtypes.OID) (kept []operand, nulls int) {
	for i := range ops {
		if ops[i].null {
			p.settle(&ops[i], common)
			nulls++
		}
	}
	if nulls == 0 {
		return ops, 0
	}
	kept = make([]operand, 0, len(ops)-nulls)
	for _, o := range ops {
		if !o.null {
			kept = append(kept, o)
		}
	}
	return kept, nulls
}

// inValue is what one value of an IN list adds: a literal the column may
// equal, or a condition of its own (a run of integers, NaN's), or nothing
// when no value of the column equals it.
func inValue(col string, ct ir.ColumnType, v value, what subject) (*ir.Literal, ir.Pred, error) {
	switch ct {
	case ir.TypeInt:
		e := edgesOf(v)
		if n, ok := e.single(); ok {
			lit := exactInt(n)
			return &lit, nil, nil
		}
		if r := runOf("=", e); !r.empty {
			return nil, runPred(col, r, false), nil
		}
		return nil, nil, nil
	case ir.TypeReal:
		f, err := asFloat(v, what)
		if err != nil {
			return nil, nil, err
		}
		if math.IsNaN(f) {
			return nil, realCompare(col, "=", f), nil
		}
		return &ir.Literal{Kind: ir.LitFloat, Float: f}, nil, nil
	}
	return &ir.Literal{Kind: ir.LitText, Text: v.s}, nil, nil
}

// joinIn ORs the list's literals and its other conditions (under NOT for
// NOT IN); nothing at all matches no value.
func joinIn(col string, ct ir.ColumnType, in *ir.In, others []ir.Pred) ir.Pred {
	if len(others) == 0 {
		if len(in.Values) == 0 {
			return decided(col, ct, in.Negate)
		}
		return in
	}
	var either ir.Pred
	if len(in.Values) > 0 {
		either = &ir.In{Column: col, Values: in.Values}
	}
	for _, o := range others {
		if either == nil {
			either = o
		} else {
			either = &ir.Or{Left: either, Right: o}
		}
	}
	return negateIf(either, in.Negate)
}

// betweenPred is `col [NOT] BETWEEN lo AND hi`: `col >= lo AND col <= hi`,
// each bound typed and compared on its own, as PostgreSQL reads BETWEEN.
func (p *parser) betweenPred(col string, lo, hi operand, negate bool) (ir.Pred, error) {
	ct := p.table.Columns[col].Type
	if lo.null || hi.null {
		return p.betweenNull(col, lo, hi, negate)
	}
	var vals [2]value
	for i, o := range []operand{lo, hi} {
		p.settle(&o, columnType(ct))
		if err := p.checkOperator(col, pick(i == 0, ">=", "<="), o); err != nil {
			return nil, err
		}
		v, err := o.read(col)
		if err != nil {
			return nil, err
		}
		if ct == ir.TypeReal && v.kind != floatValue {
			if v.f, err = asFloat(v, o.what(col)); err != nil {
				return nil, err
			}
			v.kind = floatValue
		}
		vals[i] = v
	}
	between := func(l, h ir.Literal) ir.Pred { return &ir.Between{Column: col, Lo: l, Hi: h, Negate: negate} }
	switch {
	case ct == ir.TypeInt && vals[0].kind == intValue && vals[1].kind == intValue:
		return between(exactInt(vals[0].i), exactInt(vals[1].i)), nil
	case ct == ir.TypeInt:
		r, h := runOf(">=", edgesOf(vals[0])), runOf("<=", edgesOf(vals[1]))
		if r.empty || h.empty || h.hi < r.lo {
			return runPred(col, intRun{empty: true}, negate), nil
		}
		return runPred(col, intRun{lo: r.lo, hi: h.hi}, negate), nil
	case ct == ir.TypeReal && (math.IsNaN(vals[0].f) || math.IsNaN(vals[1].f)):
		both := &ir.And{Left: realCompare(col, ">=", vals[0].f), Right: realCompare(col, "<=", vals[1].f)}
		return negateIf(both, negate), nil
	case ct == ir.TypeReal:
		return between(ir.Literal{Kind: ir.LitFloat, Float: vals[0].f}, ir.Literal{Kind: ir.LitFloat, Float: vals[1].f}), nil
	}
	return between(ir.Literal{Kind: ir.LitText, Text: vals[0].s}, ir.Literal{Kind: ir.LitText, Text: vals[1].s}), nil
}

// betweenNull is BETWEEN with a NULL end: `col >= lo AND col <= NULL` is
// false or unknown for every row, so under an even number of NOTs it keeps
// none, and under an odd number it keeps what its other end keeps
// (threevalued.go); both ends NULL, an unknown.
func (p *parser) betweenNull(col string, lo, hi operand, negate bool) (ir.Pred, error) {
	ct := p.table.Columns[col].Type
	for i, o := range []*operand{&lo, &hi} {
		p.settle(o, columnType(ct))
		if err := p.checkOperator(col, pick(i == 0, ">=", "<="), *o); err != nil {
			return nil, err
		}
	}
	positive := p.negated == negate
	var a ir.Pred
	var err error
	switch {
	case positive || (lo.null && hi.null):
		a = unknown(col, ct, !positive)
	case lo.null:
		a, err = p.comparePred(col, "<=", hi)
	default:
		a, err = p.comparePred(col, ">=", lo)
	}
	if err != nil {
		return nil, err
	}
	return negateIf(a, negate), nil
}

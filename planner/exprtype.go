package planner

import (
	"countwall/ir"
	"countwall/pgerror"
)

// The type checks PostgreSQL makes of an arithmetic condition before it
// reads a row, made here too so that such a statement is refused as
// PostgreSQL refuses it, and from its text alone: length(age) has no
// function to call, and a division by a constant zero fails on the first row
// whatever the row holds. A division whose divisor is a column, or an
// overflow that only some values reach, would fail in PostgreSQL only on the
// rows that reach it; no refusal here depends on the rows, so those are
// computed as SQLite computes them (a division by zero is NULL), which the
// README lists among the differences from PostgreSQL.

// funcArgType is the argument type an allowed function takes: text for the
// string functions, a number (real or integer) for the others.
func funcArgType(name string) ir.ColumnType {
	switch name {
	case "length", "lower", "upper":
		return ir.TypeText
	}
	return ir.TypeReal
}

// exprType is the type of an arithmetic expression's value.
func (p *parser) exprType(e ir.Expr) ir.ColumnType {
	switch x := e.(type) {
	case *ir.ColumnRef:
		return p.table.Columns[x.Column].Type
	case *ir.NumberLit:
		if x.Value.Kind == ir.LitInt {
			return ir.TypeInt
		}
		return ir.TypeReal
	case *ir.FuncCall:
		switch x.Name {
		case "length":
			return ir.TypeInt
		case "lower", "upper":
			return ir.TypeText
		}
		return p.exprType(x.Args[0])
	case *ir.BinaryExpr:
		l, r := p.exprType(x.Left), p.exprType(x.Right)
		if l == ir.TypeReal || r == ir.TypeReal {
			return ir.TypeReal
		}
		return ir.TypeInt
	}
	return ir.TypeReal
}

// checkArithmetic refuses arithmetic on text and a division or modulo by a
// constant zero, as PostgreSQL does before any row matters.
func (p *parser) checkArithmetic(op string, l, r ir.Expr) error {
	lt, rt := p.exprType(l), p.exprType(r)
	if lt == ir.TypeText || rt == ir.TypeText {
		return pgerror.Errorf(pgerror.UndefinedFunction, "operator does not exist: %s %s %s", pgTypeName(lt), op, pgTypeName(rt))
	}
	if op != "/" && op != "%" {
		return nil
	}
	if n, ok := r.(*ir.NumberLit); ok && ((n.Value.Kind == ir.LitInt && n.Value.Int == 0) || (n.Value.Kind == ir.LitFloat && n.Value.Float == 0)) {
		return pgerror.Errorf(pgerror.DivisionByZero, "division by zero")
	}
	return nil
}

// pgTypeName names a column type as PostgreSQL's messages do.
func pgTypeName(t ir.ColumnType) string {
	switch t {
	case ir.TypeInt:
		return "integer"
	case ir.TypeReal:
		return "double precision"
	}
	return "text"
}

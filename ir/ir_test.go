package ir_test

import (
	"reflect"
	"testing"

	"countwall/ir"
)

// TestLiteralValue: a literal reaches the database as the Go type of its
// kind (int64, float64, string), whatever its other fields hold, so that a
// driver binds it as that type.
func TestLiteralValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		lit  ir.Literal
		want any
	}{
		{"integer", ir.Literal{Kind: ir.LitInt, Int: 42}, int64(42)},
		{"negative integer", ir.Literal{Kind: ir.LitInt, Int: -9223372036854775808}, int64(-9223372036854775808)},
		{"zero value is the integer 0", ir.Literal{}, int64(0)},
		{"float", ir.Literal{Kind: ir.LitFloat, Float: 2.5}, 2.5},
		{"float ignores Int", ir.Literal{Kind: ir.LitFloat, Int: 3, Float: 0.25}, 0.25},
		{"text", ir.Literal{Kind: ir.LitText, Text: "O'Brien"}, "O'Brien"},
		{"empty text", ir.Literal{Kind: ir.LitText}, ""},
		{"text ignores the numbers", ir.Literal{Kind: ir.LitText, Int: 1, Float: 1, Text: "1"}, "1"},
	} {
		got := tc.lit.Value()
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Value() = %#v (%T), want %#v (%T)", tc.name, got, got, tc.want, tc.want)
		}
	}
}

// outside is a predicate kind declared outside ir, as a new kind is:
// `column OUTSIDE lo AND hi`, which means column < lo OR column > hi.
type outside struct {
	ir.Derivation
	Column string
	Lo, Hi ir.Literal
}

func (o *outside) Lower() ir.Pred {
	return &ir.Or{
		Left:  &ir.Compare{Column: o.Column, Op: "<", Value: o.Lo},
		Right: &ir.Compare{Column: o.Column, Op: ">", Value: o.Hi},
	}
}

// TestDerivedPredicates: a kind that embeds Derivation and has Lower is a
// Pred, reached by a backend's `case ir.Derived` and lowered to the kinds
// it evaluates, the same predicate at every call; no built-in kind is
// Derived, so a backend's own case for it always comes first.
func TestDerivedPredicates(t *testing.T) {
	var p ir.Pred = &outside{Column: "age", Lo: ir.Literal{Kind: ir.LitInt, Int: 18}, Hi: ir.Literal{Kind: ir.LitInt, Int: 65}}
	d, ok := p.(ir.Derived)
	if !ok {
		t.Fatal("a type embedding Derivation with Lower is not an ir.Derived")
	}
	want := &ir.Or{
		Left:  &ir.Compare{Column: "age", Op: "<", Value: ir.Literal{Kind: ir.LitInt, Int: 18}},
		Right: &ir.Compare{Column: "age", Op: ">", Value: ir.Literal{Kind: ir.LitInt, Int: 65}},
	}
	first, second := d.Lower(), d.Lower()
	if !reflect.DeepEqual(first, want) || !reflect.DeepEqual(second, want) {
		t.Errorf("Lower() = %#v then %#v, want %#v", first, second, want)
	}
	for _, builtin := range []ir.Pred{
		&ir.And{}, &ir.Or{}, &ir.Not{}, &ir.Compare{}, &ir.Between{}, &ir.In{},
		&ir.IsNull{}, &ir.Like{}, &ir.MathCompare{},
	} {
		if _, derived := builtin.(ir.Derived); derived {
			t.Errorf("the built-in kind %T is Derived", builtin)
		}
	}
}

// TestAccountingKindsKeepTheirStoredNames: the ledger and the audit keep
// each charge under its kind's name (ledger.kind, audit.charge_kind) in the
// state database, which outlives a build: renaming a kind would orphan what
// was spent under it. No accounting is the empty name, a zero Charge's.
func TestAccountingKindsKeepTheirStoredNames(t *testing.T) {
	for _, tc := range []struct {
		kind ir.Accounting
		want string
	}{
		{ir.AccountingNone, ""},
		{ir.AccountingDP, "dp"},
		{ir.AccountingIDP, "idp"},
		{ir.AccountingBDP, "bdp"},
	} {
		if string(tc.kind) != tc.want {
			t.Errorf("accounting kind %q, want %q", tc.kind, tc.want)
		}
	}
}

func TestExprColumn(t *testing.T) {
	one := &ir.NumberLit{Value: ir.Literal{Kind: ir.LitInt, Int: 1}}
	cases := []struct {
		e    ir.Expr
		want string
	}{
		{&ir.ColumnRef{Column: "age"}, "age"},
		{&ir.BinaryExpr{Op: "-", Left: one, Right: &ir.ColumnRef{Column: "age"}}, "age"},
		{&ir.FuncCall{Name: "round", Args: []ir.Expr{&ir.BinaryExpr{Op: "/", Left: &ir.ColumnRef{Column: "income"}, Right: one}, one}}, "income"},
		{&ir.FuncCall{Name: "abs", Args: []ir.Expr{one}}, ""},
		{one, ""},
	}
	for _, tc := range cases {
		if got := ir.ExprColumn(tc.e); got != tc.want {
			t.Errorf("ir.ExprColumn(%#v) = %q, want %q", tc.e, got, tc.want)
		}
	}
}

package plan_test

import (
	"slices"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

func TestConditionsNormalisation(t *testing.T) {
	q := func(p ir.Pred) *ir.Query { return &ir.Query{Table: "people", Where: p} }
	age30 := &ir.Compare{Column: "age", Op: "=", Value: fixture.IntLit(30)}
	sexF := &ir.Compare{Column: "sex", Op: "=", Value: fixture.TextLit("F")}
	equal := []struct {
		name string
		a, b *ir.Query
		want []string
	}{
		{"AND order", q(&ir.And{Left: age30, Right: sexF}), q(&ir.And{Left: sexF, Right: age30}), []string{"age = 30", "sex = 'F'"}},
		{"duplicates", q(&ir.Or{Left: age30, Right: &ir.And{Left: age30, Right: sexF}}), q(&ir.And{Left: sexF, Right: age30}), []string{"age = 30", "sex = 'F'"}},
		{"column case", q(&ir.Compare{Column: "AGE", Op: "=", Value: fixture.IntLit(30)}), q(age30), []string{"age = 30"}},
		{"30.0 is 30", q(&ir.Compare{Column: "age", Op: "=", Value: fixture.FloatLit(30)}), q(age30), []string{"age = 30"}},
		{"!= is <>", q(&ir.Compare{Column: "age", Op: "!=", Value: fixture.IntLit(3)}), q(&ir.Compare{Column: "age", Op: "<>", Value: fixture.IntLit(3)}), []string{"age <> 3"}},
		{"NOT folds into a comparison", q(&ir.Not{Inner: &ir.Compare{Column: "age", Op: "<", Value: fixture.IntLit(30)}}),
			q(&ir.Compare{Column: "age", Op: ">=", Value: fixture.IntLit(30)}), []string{"age >= 30"}},
		{"double NOT", q(&ir.Not{Inner: &ir.Not{Inner: age30}}), q(age30), []string{"age = 30"}},
		{"IN order and duplicates", q(&ir.In{Column: "sex", Values: []ir.Literal{fixture.TextLit("M"), fixture.TextLit("F"), fixture.TextLit("M")}}),
			q(&ir.In{Column: "sex", Values: []ir.Literal{fixture.TextLit("F"), fixture.TextLit("M")}}), []string{"sex IN ('F', 'M')"}},
		{"numeric IN sorted numerically", q(&ir.In{Column: "age", Values: []ir.Literal{fixture.IntLit(10), fixture.IntLit(9), fixture.FloatLit(9.5)}}),
			q(&ir.In{Column: "age", Values: []ir.Literal{fixture.FloatLit(9.5), fixture.IntLit(9), fixture.IntLit(10)}}), []string{"age IN (9, 9.5, 10)"}},
		{"NOT IN", q(&ir.Not{Inner: &ir.In{Column: "sex", Values: []ir.Literal{fixture.TextLit("M"), fixture.TextLit("F")}}}),
			q(&ir.In{Column: "sex", Values: []ir.Literal{fixture.TextLit("F"), fixture.TextLit("M")}, Negate: true}), []string{"sex NOT IN ('F', 'M')"}},
		{"one-value IN is equality", q(&ir.In{Column: "age", Values: []ir.Literal{fixture.IntLit(30), fixture.IntLit(30)}}), q(age30), []string{"age = 30"}},
		{"NOT over a one-value IN", q(&ir.Not{Inner: &ir.In{Column: "age", Values: []ir.Literal{fixture.IntLit(30)}}}),
			q(&ir.Compare{Column: "age", Op: "<>", Value: fixture.IntLit(30)}), []string{"age <> 30"}},
		{"NOT BETWEEN", q(&ir.Not{Inner: &ir.Between{Column: "age", Lo: fixture.IntLit(20), Hi: fixture.IntLit(29)}}),
			q(&ir.Between{Column: "age", Lo: fixture.IntLit(20), Hi: fixture.IntLit(29), Negate: true}), []string{"age NOT BETWEEN 20 AND 29"}},
		{"NOT IS NULL", q(&ir.Not{Inner: &ir.IsNull{Column: "income"}}), q(&ir.IsNull{Column: "income", Negate: true}), []string{"income IS NOT NULL"}},
		{"NOT LIKE with a quote", q(&ir.Not{Inner: &ir.Like{Column: "suburb", Pattern: "O'%"}}), q(&ir.Like{Column: "suburb", Pattern: "O'%", Negate: true}),
			[]string{"suburb NOT LIKE 'O''%'"}},
		{"De Morgan", q(&ir.Not{Inner: &ir.And{Left: age30, Right: &ir.Not{Inner: sexF}}}), q(&ir.Or{Left: &ir.Compare{Column: "age", Op: "<>", Value: fixture.IntLit(30)}, Right: sexF}),
			[]string{"age <> 30", "sex = 'F'"}},
		{"math", q(&ir.Not{Inner: &ir.MathCompare{Expr: &ir.FuncCall{Name: "abs", Args: []ir.Expr{&ir.BinaryExpr{Op: "-", Left: &ir.ColumnRef{Column: "Age"}, Right: &ir.NumberLit{Value: fixture.IntLit(40)}}}}, Op: "<", Value: fixture.IntLit(5)}}),
			q(&ir.MathCompare{Expr: &ir.FuncCall{Name: "abs", Args: []ir.Expr{&ir.BinaryExpr{Op: "-", Left: &ir.ColumnRef{Column: "age"}, Right: &ir.NumberLit{Value: fixture.FloatLit(40)}}}}, Op: ">=", Value: fixture.IntLit(5)}),
			[]string{"abs(age - 40) >= 5"}},
	}
	for _, tc := range equal {
		t.Run(tc.name, func(t *testing.T) {
			a, b := plan.Conditions(tc.a), plan.Conditions(tc.b)
			if !slices.Equal(a, tc.want) || !slices.Equal(b, tc.want) {
				t.Errorf("got %q and %q, want %q", a, b, tc.want)
			}
		})
	}
	if got := plan.Conditions(&ir.Query{Table: "people"}); got == nil || len(got) != 0 {
		t.Errorf("no WHERE: got %#v, want an empty list", got)
	}
	// Different conditions stay different.
	if slices.Equal(plan.Conditions(q(age30)), plan.Conditions(q(&ir.Compare{Column: "age", Op: "=", Value: fixture.IntLit(31)}))) {
		t.Error("age = 30 and age = 31 normalise alike")
	}
}

// outside is a derived predicate kind, as one declared outside ir is:
// `column OUTSIDE lo AND hi`.
type outside struct {
	ir.Derivation
	column string
	lo, hi ir.Literal
}

func (o *outside) Lower() ir.Pred {
	return &ir.Or{
		Left:  &ir.Compare{Column: o.column, Op: "<", Value: o.lo},
		Right: &ir.Compare{Column: o.column, Op: ">", Value: o.hi},
	}
}

// TestConditionsCanonicalText: the text of each kind of condition, exactly,
// since layered noise seeds from it: a change of text changes every seeded
// answer. Numbers in their shortest form, text quoted with quotes doubled,
// arithmetic parenthesised below its top, function names in lower case, a
// derived kind as the conditions it lowers to, and the list sorted.
func TestConditionsCanonicalText(t *testing.T) {
	col := func(name string) ir.Expr { return &ir.ColumnRef{Column: name} }
	num := func(v int64) ir.Expr { return &ir.NumberLit{Value: fixture.IntLit(v)} }
	for _, tc := range []struct {
		name  string
		where ir.Pred
		want  []string
	}{
		{"reals in their shortest form", &ir.And{
			Left:  &ir.Compare{Column: "income", Op: ">", Value: fixture.FloatLit(0.1)},
			Right: &ir.Compare{Column: "income", Op: "<", Value: fixture.FloatLit(1e21)}},
			[]string{"income < 1e+21", "income > 0.1"}},
		{"text with quotes", &ir.Compare{Column: "Suburb", Op: "=", Value: fixture.TextLit("O'Brien's")},
			[]string{"suburb = 'O''Brien''s'"}},
		{"numbers before text in an IN", &ir.In{Column: "u", Values: []ir.Literal{fixture.TextLit("b"), fixture.IntLit(3), fixture.TextLit("a"), fixture.FloatLit(-1.5)}},
			[]string{"u IN (-1.5, 3, 'a', 'b')"}},
		{"BETWEEN keeps its ends", &ir.Between{Column: "age", Lo: fixture.IntLit(29), Hi: fixture.IntLit(20)},
			[]string{"age BETWEEN 29 AND 20"}},
		{"NOT NOT BETWEEN", &ir.Not{Inner: &ir.Between{Column: "age", Lo: fixture.IntLit(1), Hi: fixture.IntLit(2), Negate: true}},
			[]string{"age BETWEEN 1 AND 2"}},
		{"NOT IS NOT NULL", &ir.Not{Inner: &ir.IsNull{Column: "sex", Negate: true}}, []string{"sex IS NULL"}},
		{"LIKE as typed", &ir.Like{Column: "suburb", Pattern: `a\_b%`}, []string{`suburb LIKE 'a\_b%'`}},
		{"every negated comparison", &ir.Not{Inner: &ir.And{
			Left:  &ir.And{Left: &ir.Compare{Column: "a", Op: "=", Value: fixture.IntLit(1)}, Right: &ir.Compare{Column: "b", Op: "<>", Value: fixture.IntLit(1)}},
			Right: &ir.And{Left: &ir.Compare{Column: "c", Op: "<=", Value: fixture.IntLit(1)}, Right: &ir.Compare{Column: "d", Op: ">", Value: fixture.IntLit(1)}}}},
			[]string{"a <> 1", "b = 1", "c > 1", "d <= 1"}},
		{"arithmetic parenthesised below the top", &ir.MathCompare{
			Expr: &ir.BinaryExpr{Op: "*", Left: &ir.BinaryExpr{Op: "+", Left: col("Age"), Right: num(1)}, Right: num(2)},
			Op:   "<=", Value: fixture.IntLit(90)},
			[]string{"(age + 1) * 2 <= 90"}},
		{"functions in lower case", &ir.MathCompare{
			Expr: &ir.FuncCall{Name: "LENGTH", Args: []ir.Expr{&ir.FuncCall{Name: "Upper", Args: []ir.Expr{col("sex")}}}},
			Op:   "!=", Value: fixture.IntLit(1)},
			[]string{"length(upper(sex)) <> 1"}},
		{"a derived kind lowered, NOT pushed into it", &ir.Not{Inner: &outside{column: "age", lo: fixture.IntLit(18), hi: fixture.IntLit(65)}},
			[]string{"age <= 65", "age >= 18"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := plan.Conditions(&ir.Query{Table: "people", Where: tc.where}); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if got := plan.Conditions(nil); got == nil || len(got) != 0 {
		t.Errorf("no query: got %#v, want an empty list", got)
	}
}

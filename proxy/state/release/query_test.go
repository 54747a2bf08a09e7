package release

import "testing"

func TestConjunctText(t *testing.T) {
	num := func(s string) Constant { return Constant{Text: s} }
	str := func(s string) Constant { return Constant{Text: s, String: true} }
	cases := []struct {
		c    Conjunct
		want string
	}{
		{Compare("age", OpGe, num("30")), "age >= 30"},
		{Compare("name", OpEq, str("O'Hara")), "name = 'O''Hara'"},
		{Compare("a and b", OpEq, num("1")), `"a and b" = 1`},
		{Compare(`say "where"`, OpLike, str("x%")), `"say ""where""" like 'x%'`},
		{Compare("select", OpNe, num("2")), `"select" <> 2`},
		{Between("age", false, num("30"), num("39")), "age between 30 and 39"},
		{Between("age", true, num("30"), num("39")), "age not between 30 and 39"},
		{In("sex", false, []Constant{str("F"), str("M")}), "sex in ('F', 'M')"},
		{In("zip", true, []Constant{num("1")}), "zip not in (1)"},
		{IsNull("income", false), "income is null"},
		{IsNull("income", true), "income is not null"},
		{Or([]Conjunct{Compare("a", OpEq, num("1")), And([]Conjunct{Compare("b", OpEq, num("2")), Compare("c", OpLt, num("3"))})}),
			"a = 1 or (b = 2 and c < 3)"},
		{Not([]Conjunct{Compare("a", OpEq, num("1")), Or([]Conjunct{Compare("b", OpEq, num("2")), IsNull("b", false)})}),
			"not (a = 1 and (b = 2 or b is null))"},
		{Not([]Conjunct{Or([]Conjunct{Compare("a", OpEq, num("1")), IsNull("a", false)})}), "not (a = 1 or a is null)"},
		{Expr("age", "abs(age - 40)", OpLt, num("5")), "abs(age - 40) < 5"},
	}
	for _, tc := range cases {
		if tc.c.Text != tc.want {
			t.Errorf("got %q, want %q", tc.c.Text, tc.want)
		}
	}
}

package planner

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
	"countwall/pgtypes"
)

func TestSQLForms(t *testing.T) {
	s := func(v string) *string { return &v }
	in := func(col string, negate bool, vals ...int64) ir.Pred {
		p := &ir.In{Column: col, Negate: negate}
		for _, v := range vals {
			p.Values = append(p.Values, ir.Literal{Kind: ir.LitInt, Int: v})
		}
		return p
	}
	never := &ir.And{Left: &ir.IsNull{Column: "age"}, Right: &ir.IsNull{Column: "age", Negate: true}}
	tests := []struct {
		sql   string
		args  []*string
		where ir.Pred
		types []pgtypes.OID
	}{
		{"SELECT COUNT(*) FROM people WHERE age = ANY(ARRAY[1, 2, 3])", nil, in("age", false, 1, 2, 3), nil},
		{"SELECT COUNT(*) FROM people WHERE age = ANY('{1,2}')", nil, in("age", false, 1, 2), nil},
		{"SELECT COUNT(*) FROM people WHERE age = ANY('{1,2}'::int[])", nil, in("age", false, 1, 2), nil},
		{"SELECT COUNT(*) FROM people WHERE age <> ALL('{1,2}')", nil, in("age", true, 1, 2), nil},
		{"SELECT COUNT(*) FROM people WHERE age = ANY($1)", []*string{s("{4,5}")}, in("age", false, 4, 5), []pgtypes.OID{1016}},
		{"SELECT COUNT(*) FROM people WHERE age = ANY($1)", []*string{s("{4,NULL}")}, &ir.Compare{Column: "age", Op: "=", Value: ir.Literal{Int: 4}}, []pgtypes.OID{1016}},
		{"SELECT COUNT(*) FROM people WHERE NOT age = ANY($1)", []*string{s("{4,NULL}")}, &ir.Not{Inner: trueUnlessNull("age", ir.TypeInt)}, []pgtypes.OID{1016}},
		{"SELECT COUNT(*) FROM people WHERE age = ANY($1)", []*string{s("{}")}, never, []pgtypes.OID{1016}},
		{"SELECT COUNT(*) FROM people WHERE age <> ALL($1)", []*string{s("{}")}, &ir.Not{Inner: never}, []pgtypes.OID{1016}},
		{"SELECT COUNT(*) FROM people WHERE age = ANY($1)", []*string{nil}, falseUnlessNull("age", ir.TypeInt), []pgtypes.OID{1016}},
		{"SELECT COUNT(*) FROM people WHERE sex = ANY($1)", []*string{s(`{F,"M"}`)}, &ir.In{Column: "sex", Values: []ir.Literal{{Kind: ir.LitText, Text: "F"}, {Kind: ir.LitText, Text: "M"}}}, []pgtypes.OID{1009}},
		{"SELECT COUNT(*) FROM people WHERE age = '30'::int", nil, &ir.Compare{Column: "age", Op: "=", Value: ir.Literal{Int: 30}}, nil},
		{"SELECT COUNT(*) FROM people WHERE age = 30.5::int", nil, &ir.Compare{Column: "age", Op: "=", Value: ir.Literal{Int: 31}}, nil},
		{"SELECT COUNT(*) FROM people WHERE sex = CAST($1 AS VARCHAR)", []*string{s("F")}, &ir.Compare{Column: "sex", Op: "=", Value: ir.Literal{Kind: ir.LitText, Text: "F"}}, []pgtypes.OID{pgtypes.Varchar}},
		{"SELECT COUNT(*) FROM people WHERE sex = CAST('Fx' AS char)", nil, &ir.Compare{Column: "sex", Op: "=", Value: ir.Literal{Kind: ir.LitText, Text: "F"}}, nil},
		{"SELECT COUNT(*) FROM people WHERE CAST(age AS bigint) = 30", nil, &ir.Compare{Column: "age", Op: "=", Value: ir.Literal{Int: 30}}, nil},
	}
	for _, tc := range tests {
		st, types, err := Prepare(tc.sql, testCatalog(nil)).BindTypes(tc.args)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if q := st.(*ir.Query); !reflect.DeepEqual(q.Where, tc.where) {
			t.Errorf("%s: WHERE %#v, want %#v", tc.sql, q.Where, tc.where)
		}
		if !reflect.DeepEqual(types, tc.types) {
			t.Errorf("%s: parameter types %v, want %v", tc.sql, types, tc.types)
		}
	}
}

func TestSQLFormsSelectList(t *testing.T) {
	tests := []struct {
		sql     string
		groupBy []string
		after   int
		orderBy []ir.Order
	}{
		{"SELECT COUNT(*), sex FROM people GROUP BY sex", []string{"sex"}, 1, nil},
		{"SELECT sex, COUNT(*) FROM people GROUP BY 1 ORDER BY 1 DESC", []string{"sex"}, 0, []ir.Order{{Column: "sex", Desc: true}}},
		{"SELECT age, COUNT(*), sex FROM people GROUP BY 1, 3 ORDER BY 3, 1", []string{"age", "sex"}, 1, []ir.Order{{Column: "sex"}, {Column: "age"}}},
		{"SELECT CAST(age AS VARCHAR), COUNT(*) FROM people GROUP BY 1", []string{"age"}, 0, nil},
		{"SELECT age::text, COUNT(*) FROM people GROUP BY age ORDER BY age", []string{"age"}, 0, []ir.Order{{Column: "age"}}},
		// A constant beside a group column splits no group, and orders nothing.
		{"SELECT sex, COUNT(*) FROM people GROUP BY sex, +1 ORDER BY +5, 1 DESC", []string{"sex"}, 0, []ir.Order{{Column: "sex", Desc: true}}},
		{"SELECT sex, COUNT(*) FROM people GROUP BY (1) ORDER BY 1+0, (1)", []string{"sex"}, 0, []ir.Order{{Column: "sex"}}},
	}
	for _, tc := range tests {
		st, err := Parse(tc.sql, nil, testCatalog(nil))
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		q := st.(*ir.Query)
		if !reflect.DeepEqual(q.GroupBy, tc.groupBy) || q.GroupsAfterCount != tc.after || !reflect.DeepEqual(q.OrderBy, tc.orderBy) {
			t.Errorf("%s: GROUP BY %v, %d after the count, ORDER BY %v; want %v, %d, %v", tc.sql, q.GroupBy, q.GroupsAfterCount, q.OrderBy, tc.groupBy, tc.after, tc.orderBy)
		}
	}
}

func TestSQLFormsRefusals(t *testing.T) {
	tests := []struct {
		sql  string
		code pgerror.Code
	}{
		{"SELECT sex, COUNT(*) FROM people GROUP BY 3", pgerror.InvalidColumnReference},
		{"SELECT sex, COUNT(*) FROM people GROUP BY 0", pgerror.InvalidColumnReference},
		{"SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY 3", pgerror.InvalidColumnReference},
		{"SELECT sex, COUNT(*) FROM people GROUP BY 2", pgerror.GroupingError},
		{"SELECT sex, COUNT(*) FROM people GROUP BY 1.5", pgerror.SyntaxError},
		{"SELECT sex, COUNT(*) FROM people GROUP BY NULL", pgerror.SyntaxError},
		{"SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY true", pgerror.SyntaxError},
		{"SELECT sex, COUNT(*) FROM people GROUP BY +1", pgerror.GroupingError},
		{"SELECT COUNT(*) FROM people GROUP BY (1)", pgerror.GroupingError},
		// GROUP BY only a constant is one group, which PostgreSQL leaves out
		// when no row matches: refused, for the count without GROUP BY.
		{"SELECT COUNT(*) FROM people GROUP BY +1", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*) FROM people GROUP BY 1::int, 2 - 1", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*) FROM people GROUP BY 1 / 1", pgerror.GroupingError},
		{"SELECT age::text, COUNT(*) FROM people GROUP BY 1 ORDER BY 1", pgerror.FeatureNotSupported},
		{"SELECT CAST(age AS int), COUNT(*) FROM people GROUP BY 1", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*)::int FROM people", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*) FROM people WHERE age::date = '1'", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*) FROM people WHERE age = '1'::date", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*) FROM people WHERE age > ANY(ARRAY[1])", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*) FROM people WHERE age = ALL(ARRAY[1])", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*) FROM people WHERE age = ANY(ARRAY[])", pgerror.IndeterminateDatatype},
		{"SELECT COUNT(*) FROM people WHERE age = ANY('{1,')", pgerror.InvalidTextRepresentation},
		{"SELECT COUNT(*) FROM people WHERE age = ANY('{{1},{2}}')", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*) FROM people WHERE age = ANY('1'::int)", pgerror.WrongObjectType},
		{"SELECT COUNT(*) FROM people WHERE age = ANY(SELECT 1)", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*) FROM people WHERE age = countwall_any(1)", pgerror.UndefinedFunction},
		{"SELECT COUNT(*) FROM people WHERE age = 'x'::int", pgerror.InvalidTextRepresentation},
	}
	for _, tc := range tests {
		_, err := Parse(tc.sql, nil, testCatalog(nil))
		var pe *pgerror.Error
		if !errors.As(err, &pe) || pe.Code != tc.code {
			t.Errorf("%s: %v, want SQLSTATE %s", tc.sql, err, tc.code)
		}
		// The rewrite's own names are never what a refusal speaks of.
		if err != nil && strings.Contains(strings.ToLower(err.Error()), "countwall_") && !strings.Contains(tc.sql, "countwall_") {
			t.Errorf("%s: the refusal names an internal form: %v", tc.sql, err)
		}
	}
	strict := testCatalog(func(p *ir.Policy) { p.Strict = true })
	if _, err := Parse("SELECT COUNT(*) FROM people WHERE age = ANY('{1,2}')", nil, strict); err == nil {
		t.Error("= ANY under a strict policy: answered, want it refused as IN is")
	}
	few := testCatalog(func(p *ir.Policy) { p.MaxInList = 2 })
	if _, err := Parse("SELECT COUNT(*) FROM people WHERE age = ANY($1)", []*string{new(string)}, few); err == nil {
		t.Error("an unreadable array parameter: answered, want 22P02")
	}
	if _, err := Prepare("SELECT COUNT(*) FROM people WHERE age = ANY($1)", few).Bind([]*string{ptr("{1,2,3}")}); err == nil {
		t.Error("an array of 3 values over max_in_list 2: answered, want 54000")
	}
}

func ptr(s string) *string { return &s }

func TestShapeKeepsOrdinals(t *testing.T) {
	for _, sql := range []string{"SELECT sex, COUNT(*) FROM people WHERE age > 3 GROUP BY 1 ORDER BY 1",
		"SELECT age, COUNT(*), sex FROM people WHERE age > 3 GROUP BY 1, 3 ORDER BY 1 DESC, 3"} {
		toks := mustLex(t, sql)
		_, constants, ok := shapeOf(toks)
		if !ok || len(constants) != 1 {
			t.Errorf("%s: %d constants in the shape (ok %v), want 1: the positions are part of the shape", sql, len(constants), ok)
		}
	}
}

func mustLex(t *testing.T, sql string) []pglex.Token {
	t.Helper()
	toks, err := pglex.Lex(sql)
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

package sqlgen

import (
	"countwall/ir"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// testPeopleTable is the catalog entry of the people table the store tests
// build: id is the privacy unit.
func testPeopleTable() *ir.Table {
	return &ir.Table{
		Name:        "people",
		PrivacyUnit: "id",
		Columns: map[string]*ir.Column{
			"id":     {Name: "id", Type: ir.TypeInt},
			"age":    {Name: "age", Type: ir.TypeInt},
			"sex":    {Name: "sex", Type: ir.TypeText},
			"suburb": {Name: "suburb", Type: ir.TypeText},
			"income": {Name: "income", Type: ir.TypeInt},
			"score":  {Name: "score", Type: ir.TypeReal},
		},
		Policy: ir.DefaultPolicy(),
	}
}

func intLit(v int64) ir.Literal     { return ir.Literal{Kind: ir.LitInt, Int: v} }
func floatLit(v float64) ir.Literal { return ir.Literal{Kind: ir.LitFloat, Float: v} }
func textLit(v string) ir.Literal   { return ir.Literal{Kind: ir.LitText, Text: v} }

func TestCompileExactSQL(t *testing.T) {
	people := testPeopleTable()
	age30 := &ir.Compare{Column: "age", Op: "=", Value: intLit(30)}
	cases := []struct {
		name  string
		q     *ir.Query
		needs ir.Needs
		sql   string
		args  []any
	}{
		{
			name: "plain count",
			q:    &ir.Query{Table: "people"},
			sql:  `SELECT COUNT(*) FROM "people"`,
		},
		{
			name: "equality",
			q:    &ir.Query{Table: "people", Where: age30},
			sql:  `SELECT COUNT(*) FROM "people" WHERE "age" = ?`,
			args: []any{int64(30)},
		},
		{
			name: "bang-equals becomes <>",
			q:    &ir.Query{Table: "people", Where: &ir.Compare{Column: "sex", Op: "!=", Value: textLit("F")}},
			sql:  `SELECT COUNT(*) FROM "people" WHERE "sex" <> ?`,
			args: []any{"F"},
		},
		{
			name: "every comparison operator",
			q: &ir.Query{Table: "people", Where: &ir.And{
				Left:  &ir.Or{Left: &ir.Compare{Column: "age", Op: "<", Value: intLit(1)}, Right: &ir.Compare{Column: "age", Op: "<=", Value: intLit(2)}},
				Right: &ir.Or{Left: &ir.Compare{Column: "age", Op: ">", Value: intLit(3)}, Right: &ir.Compare{Column: "income", Op: ">=", Value: floatLit(4.5)}},
			}},
			sql:  `SELECT COUNT(*) FROM "people" WHERE (("age" < ? OR "age" <= ?) AND ("age" > ? OR "income" >= ?))`,
			args: []any{int64(1), int64(2), int64(3), 4.5},
		},
		{
			name: "between and not between",
			q: &ir.Query{Table: "people", Where: &ir.And{
				Left:  &ir.Between{Column: "age", Lo: intLit(20), Hi: intLit(29)},
				Right: &ir.Between{Column: "income", Lo: intLit(0), Hi: intLit(10), Negate: true},
			}},
			sql:  `SELECT COUNT(*) FROM "people" WHERE ("age" BETWEEN ? AND ? AND "income" NOT BETWEEN ? AND ?)`,
			args: []any{int64(20), int64(29), int64(0), int64(10)},
		},
		{
			name: "in and not in",
			q: &ir.Query{Table: "people", Where: &ir.Or{
				Left:  &ir.In{Column: "sex", Values: []ir.Literal{textLit("M"), textLit("F")}},
				Right: &ir.In{Column: "age", Values: []ir.Literal{intLit(1)}, Negate: true},
			}},
			sql:  `SELECT COUNT(*) FROM "people" WHERE ("sex" IN (?, ?) OR "age" NOT IN (?))`,
			args: []any{"M", "F", int64(1)},
		},
		{
			name: "is null and is not null under not",
			q: &ir.Query{Table: "people", Where: &ir.Not{Inner: &ir.And{
				Left:  &ir.IsNull{Column: "income"},
				Right: &ir.IsNull{Column: "sex", Negate: true},
			}}},
			sql: `SELECT COUNT(*) FROM "people" WHERE NOT (("income" IS NULL AND "sex" IS NOT NULL))`,
		},
		{
			name: "like and not like bind the pattern",
			q: &ir.Query{Table: "people", Where: &ir.And{
				Left:  &ir.Like{Column: "suburb", Pattern: "North%"},
				Right: &ir.Like{Column: "suburb", Pattern: "%\\_x", Negate: true},
			}},
			sql:  `SELECT COUNT(*) FROM "people" WHERE ("suburb" LIKE ? ESCAPE '\' AND "suburb" NOT LIKE ? ESCAPE '\')`,
			args: []any{"North%", "%\\_x"},
		},
		{
			name: "math computed only within the checked range",
			q: &ir.Query{Table: "people", Where: &ir.MathCompare{
				Expr: &ir.FuncCall{Name: "abs", Args: []ir.Expr{&ir.BinaryExpr{Op: "-", Left: &ir.ColumnRef{Column: "age"}, Right: &ir.NumberLit{Value: intLit(40)}}}},
				Op:   "<", Value: intLit(5),
				Guard: &ir.Between{Column: "age", Lo: intLit(0), Hi: intLit(120)},
			}},
			sql:  `SELECT COUNT(*) FROM "people" WHERE CASE WHEN typeof("age") = 'integer' AND "age" BETWEEN ? AND ? THEN abs(("age" - ?)) END < ?`,
			args: []any{int64(0), int64(120), int64(40), int64(5)},
		},
		{
			name: "math with round, floor, a real column and text functions",
			q: &ir.Query{Table: "people", Where: &ir.Or{
				Left: &ir.Or{
					Left: &ir.MathCompare{Expr: &ir.FuncCall{Name: "round", Args: []ir.Expr{
						&ir.BinaryExpr{Op: "/", Left: &ir.ColumnRef{Column: "score"}, Right: &ir.NumberLit{Value: floatLit(3)}},
					}}, Op: ">=", Value: floatLit(10.5), Guard: &ir.Between{Column: "score", Lo: floatLit(-1), Hi: floatLit(1)}},
					Right: &ir.MathCompare{Expr: &ir.FuncCall{Name: "floor", Args: []ir.Expr{&ir.ColumnRef{Column: "income"}}},
						Op: "=", Value: floatLit(7), Guard: &ir.Between{Column: "income", Lo: intLit(-9), Hi: intLit(9)}},
				},
				Right: &ir.MathCompare{Expr: &ir.FuncCall{Name: "length", Args: []ir.Expr{&ir.FuncCall{Name: "upper", Args: []ir.Expr{&ir.ColumnRef{Column: "suburb"}}}}}, Op: "=", Value: intLit(4)},
			}},
			sql: `SELECT COUNT(*) FROM "people" WHERE ((CASE WHEN "score" BETWEEN ? AND ? THEN countwall_round_half_even((CAST("score" AS REAL) / ?)) END >= ? ` +
				`OR CASE WHEN typeof("income") = 'integer' AND "income" BETWEEN ? AND ? THEN floor(CAST("income" AS REAL)) END = ?) ` +
				`OR length(upper("suburb")) = ?)`,
			args: []any{-1.0, 1.0, 3.0, 10.5, int64(-9), int64(9), 7.0, int64(4)},
		},
		{
			name: "group by two columns",
			q:    &ir.Query{Table: "people", GroupBy: []string{"sex", "suburb"}, Where: age30},
			sql:  `SELECT countwall_group_text("sex"), countwall_group_text("suburb"), COUNT(*) FROM "people" WHERE "age" = ? GROUP BY countwall_group_text("sex"), countwall_group_text("suburb") ORDER BY countwall_group_text("sex"), countwall_group_text("suburb")`,
			args: []any{int64(30)},
		},
		{
			name: "count distinct units",
			q:    &ir.Query{Table: "people", Agg: ir.CountDistinct, GroupBy: []string{"sex"}},
			sql:  `SELECT countwall_group_text("sex"), COUNT(DISTINCT "id") FROM "people" GROUP BY countwall_group_text("sex") ORDER BY countwall_group_text("sex")`,
		},
		{
			name:  "table size and conditions need no extra SQL",
			q:     &ir.Query{Table: "people", Where: age30},
			needs: ir.Needs{TableSize: true, Conditions: true},
			sql:   `SELECT COUNT(*) FROM "people" WHERE "age" = ?`,
			args:  []any{int64(30)},
		},
		{
			name:  "units without keys: one pass with COUNT(DISTINCT)",
			q:     &ir.Query{Table: "people", GroupBy: []string{"sex"}, Where: age30},
			needs: ir.Needs{Units: true},
			sql:   `SELECT countwall_group_text("sex"), COUNT(*), COUNT(DISTINCT "id") FROM "people" WHERE "age" = ? GROUP BY countwall_group_text("sex") ORDER BY countwall_group_text("sex")`,
			args:  []any{int64(30)},
		},
		{
			name:  "count distinct with units",
			q:     &ir.Query{Table: "people", Agg: ir.CountDistinct},
			needs: ir.Needs{Units: true},
			sql:   `SELECT COUNT(DISTINCT "id"), COUNT(DISTINCT "id") FROM "people"`,
		},
		{
			name:  "key: the secret goes first",
			q:     &ir.Query{Table: "people", GroupBy: []string{"sex", "age"}, Where: &ir.Compare{Column: "income", Op: ">", Value: intLit(100)}},
			needs: ir.Needs{Key: true},
			sql: `SELECT cw_g0, cw_g1, COALESCE(SUM(cw_n), 0), COUNT(cw_u), COALESCE(SUM(cw_k), 0) % 4294967296 ` +
				`FROM (SELECT countwall_group_text("sex") AS cw_g0, CASE WHEN typeof("age") IN ('integer', 'real') THEN "age" END AS cw_g1, ` +
				`"id" AS cw_u, COUNT(*) AS cw_n, countwall_record_key(?, "id") AS cw_k ` +
				`FROM "people" WHERE "income" > ? GROUP BY countwall_group_text("sex"), CASE WHEN typeof("age") IN ('integer', 'real') THEN "age" END, "id") ` +
				`GROUP BY cw_g0, cw_g1 ORDER BY cw_g0, cw_g1`,
			args: []any{[]byte(nil), int64(100)},
		},
		{
			name:  "count distinct with keys, no group",
			q:     &ir.Query{Table: "people", Agg: ir.CountDistinct},
			needs: ir.Needs{Units: true, Key: true},
			sql: `SELECT COUNT(cw_u), COUNT(cw_u), COALESCE(SUM(cw_k), 0) % 4294967296 ` +
				`FROM (SELECT "id" AS cw_u, COUNT(*) AS cw_n, countwall_record_key(?, "id") AS cw_k FROM "people" GROUP BY "id")`,
			args: []any{[]byte(nil)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sql, args := Compile(people, tc.q, tc.needs)
			if sql != tc.sql {
				t.Errorf("sql:\n got %s\nwant %s", sql, tc.sql)
			}
			if !reflect.DeepEqual(args, tc.args) {
				t.Errorf("args: got %#v, want %#v", args, tc.args)
			}
			if got := strings.Count(sql, "?"); got != len(args) {
				t.Errorf("%d ? marks for %d args", got, len(args))
			}
		})
	}
}

func TestCompileQuotesCatalogIdentifiers(t *testing.T) {
	tbl := &ir.Table{
		Name:        `my "table"`,
		PrivacyUnit: "uid",
		Columns: map[string]*ir.Column{
			"uid":    {Name: "uid", Type: ir.TypeInt},
			`we"ird`: {Name: `We"ird`, Type: ir.TypeText},
		},
	}
	q := &ir.Query{Table: tbl.Name, GroupBy: []string{`we"ird`}, Where: &ir.IsNull{Column: `WE"IRD`, Negate: true}}
	sql, args := Compile(tbl, q, ir.Needs{})
	want := `SELECT countwall_group_text("We""ird"), COUNT(*) FROM "my ""table""" WHERE "We""ird" IS NOT NULL GROUP BY countwall_group_text("We""ird") ORDER BY countwall_group_text("We""ird")`
	if sql != want || args != nil {
		t.Errorf("got %s %v, want %s []", sql, args, want)
	}
}

func TestCompileRefusesWhatTheCatalogDoesNotKnow(t *testing.T) {
	people := testPeopleTable()
	cases := map[string]*ir.Query{
		"unknown where column":  {Where: &ir.Compare{Column: "salary", Op: "=", Value: intLit(1)}},
		"unknown group column":  {GroupBy: []string{"salary"}},
		"function not allowed":  {Where: &ir.MathCompare{Expr: &ir.FuncCall{Name: "random"}, Op: "=", Value: intLit(1)}},
		"wrong argument count":  {Where: &ir.MathCompare{Expr: &ir.FuncCall{Name: "abs"}, Op: "=", Value: intLit(1)}},
		"operator not allowed":  {Where: &ir.MathCompare{Expr: &ir.BinaryExpr{Op: "||", Left: &ir.ColumnRef{Column: "age"}, Right: &ir.ColumnRef{Column: "age"}}, Op: "=", Value: intLit(1)}},
		"comparison not known":  {Where: &ir.Compare{Column: "age", Op: "<=>", Value: intLit(1)}},
		"empty in list":         {Where: &ir.In{Column: "age"}},
		"nil inside not":        {Where: &ir.Not{}},
		"column ref is unknown": {Where: &ir.MathCompare{Expr: &ir.ColumnRef{Column: "x"}, Op: "=", Value: intLit(1)}},
		"math with no range":    {Where: &ir.MathCompare{Expr: &ir.ColumnRef{Column: "age"}, Op: "=", Value: intLit(1)}},
		"math with another range": {Where: &ir.MathCompare{Expr: &ir.ColumnRef{Column: "age"}, Op: "=", Value: intLit(1),
			Guard: &ir.Between{Column: "income", Lo: intLit(0), Hi: intLit(1)}}},
	}
	for name, q := range cases {
		t.Run(name, func(t *testing.T) {
			q.Table = "people"
			if sql, args := Compile(people, q, ir.Needs{Key: true}); sql != "" || args != nil {
				t.Errorf("compiled to %q %v, want a refusal", sql, args)
			}
			if _, _, err := SQLite(people, q, ir.Needs{}, nil); err == nil {
				t.Error("compile gave no error")
			}
		})
	}
}

// TestCompileNeverInlinesLiterals builds predicates of every kind from marker
// literals and checks that none of the markers reaches the SQL text, while all
// of them reach the arguments.
func TestCompileNeverInlinesLiterals(t *testing.T) {
	people := testPeopleTable()
	var markers []string
	next := 0
	text := func() ir.Literal {
		next++
		m := "zq'marker\"" + strconv.Itoa(next) + "--;"
		markers = append(markers, m)
		return textLit(m)
	}
	num := func() ir.Literal {
		next++
		v := int64(7_654_321_000 + next)
		markers = append(markers, strconv.FormatInt(v, 10))
		return intLit(v)
	}
	where := &ir.And{
		Left: &ir.Or{
			Left:  &ir.Compare{Column: "sex", Op: "=", Value: text()},
			Right: &ir.Between{Column: "age", Lo: num(), Hi: num(), Negate: true},
		},
		Right: &ir.Not{Inner: &ir.Or{
			Left: &ir.In{Column: "suburb", Values: []ir.Literal{text(), text(), text()}},
			Right: &ir.And{
				Left: &ir.Like{Column: "suburb", Pattern: text().Text},
				Right: &ir.MathCompare{Expr: &ir.BinaryExpr{Op: "*", Left: &ir.ColumnRef{Column: "income"}, Right: &ir.NumberLit{Value: num()}}, Op: ">", Value: num(),
					Guard: &ir.Between{Column: "income", Lo: num(), Hi: num()}},
			},
		}},
	}
	for _, needs := range []ir.Needs{{}, {Units: true}, {Key: true, TableSize: true}} {
		for _, agg := range []ir.AggKind{ir.CountRows, ir.CountDistinct} {
			q := &ir.Query{Table: "people", Agg: agg, Where: where, GroupBy: []string{"sex"}}
			sql, args := Compile(people, q, needs)
			if sql == "" {
				t.Fatalf("needs %+v: query refused", needs)
			}
			for _, m := range markers {
				if strings.Contains(sql, m) {
					t.Errorf("needs %+v: literal %q is in the SQL: %s", needs, m, sql)
				}
			}
			got := map[string]bool{}
			for _, a := range args {
				switch a := a.(type) {
				case string:
					got[a] = true
				case int64:
					got[strconv.FormatInt(a, 10)] = true
				}
			}
			for _, m := range markers {
				if !got[m] {
					t.Errorf("needs %+v: literal %q is not bound", needs, m)
				}
			}
		}
	}
}

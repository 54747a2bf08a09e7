package plan_test

import (
	"reflect"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

// withDomains is the people table with sex's categories and age's range
// declared.
func withDomains(categories []string, lo, hi int64) *ir.Table {
	t := fixture.People()
	t.Columns["sex"].Domain = &ir.Domain{Categories: categories}
	t.Columns["age"].Domain = &ir.Domain{IsRange: true, Min: lo, Max: hi}
	return t
}

// TestShapeDomainProduct: with a domain for every GROUP BY column the
// answer is their product, categories as listed and ranges ascending, the
// last column varying fastest, every cell zero until added to.
func TestShapeDomainProduct(t *testing.T) {
	tbl := withDomains([]string{"M", "F"}, 1, 3)
	shape, err := plan.NewShape(tbl, &ir.Query{Table: "people", GroupBy: []string{"sex", "age"}})
	if err != nil {
		t.Fatal(err)
	}
	if !shape.Complete || len(shape.Columns) != 2 || shape.MaxGroups != 10000 {
		t.Fatalf("shape %+v: want complete over 2 columns, max_groups 10000", shape)
	}
	var want []ir.Cell
	for _, g := range [][]string{{"M", "1"}, {"M", "2"}, {"M", "3"}, {"F", "1"}, {"F", "2"}, {"F", "3"}} {
		want = append(want, ir.Cell{Group: fixture.Group(g...), InDomain: true})
	}
	if !reflect.DeepEqual(shape.Product, want) {
		t.Errorf("product %+v,\nwant %+v", shape.Product, want)
	}
	plain, err := plan.NewShape(fixture.People(), &ir.Query{Table: "people"})
	if err != nil || !plain.Complete || plain.Product != nil {
		t.Errorf("plain COUNT: %+v, %v; want complete without a product", plain, err)
	}
}

// TestShapeRefusals: a query the catalog cannot lay out is an internal
// error (the parser let it through); a domain product over the group limit
// is the analyst's, 54000 with a hint.
func TestShapeRefusals(t *testing.T) {
	big := withDomains([]string{"F", "M", "X"}, 0, 99) // 300 cells
	big.Policy.MaxGroups = 299
	for _, tc := range []struct {
		name string
		tbl  *ir.Table
		q    *ir.Query
		code pgerror.Code
		msg  string
	}{
		{"unknown group column", fixture.People(), &ir.Query{Table: "people", GroupBy: []string{"zip"}}, pgerror.InternalError,
			`column "zip" is not in the catalog of table "people"`},
		{"ORDER BY outside GROUP BY", fixture.People(), &ir.Query{Table: "people", GroupBy: []string{"sex"}, OrderBy: []ir.Order{{Column: "age"}}},
			pgerror.InternalError, `ORDER BY column "age" is not a GROUP BY column`},
		{"empty domain", withDomains(nil, 0, 1), &ir.Query{Table: "people", GroupBy: []string{"sex"}}, pgerror.InternalError,
			`the public domain of column "sex" is empty`},
		{"product over the limit", big, &ir.Query{Table: "people", GroupBy: []string{"sex", "age"}}, pgerror.ProgramLimitExceeded,
			"the public domains of the GROUP BY columns have more cells than the limit of 299 groups"},
	} {
		_, err := plan.NewShape(tc.tbl, tc.q)
		if got := pgerror.SQLState(err); got != tc.code || err.Error() != tc.msg {
			t.Errorf("%s: %v (%s), want %s: %s", tc.name, err, got, tc.code, tc.msg)
		}
	}
	big.Policy.MaxGroups = 300
	if _, err := plan.NewShape(big, &ir.Query{Table: "people", GroupBy: []string{"sex", "age"}}); err != nil {
		t.Errorf("a product of exactly the limit: %v", err)
	}
}

// TestAccumulator: over declared domains it sums what maps to each cell of
// the product and drops groups outside it; without, it keeps what it is
// given, marks groups outside a column's domain, and refuses one group past
// the limit; a plain COUNT of nothing is one zero cell.
func TestAccumulator(t *testing.T) {
	tbl := withDomains([]string{"F", "M"}, 0, 1)
	shape, err := plan.NewShape(tbl, &ir.Query{Table: "people", GroupBy: []string{"sex"}})
	if err != nil {
		t.Fatal(err)
	}
	acc := shape.NewAccumulator()
	for _, c := range []ir.Cell{
		{Group: fixture.Group("M"), Count: 3, Units: 2, Key: 7},
		{Group: fixture.Group("X"), Count: 5, Units: 5, Key: 1},
		{Group: fixture.Group("NULL"), Count: 1, Units: 1, Key: 1},
		{Group: fixture.Group("M"), Count: 1, Units: 1, Key: 4294967295},
	} {
		if err := acc.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	want := []ir.Cell{
		{Group: fixture.Group("F"), InDomain: true},
		{Group: fixture.Group("M"), Count: 4, Units: 3, Key: 6, InDomain: true}, // keys add mod 2^32
	}
	if got := acc.Result(); !reflect.DeepEqual(got, want) {
		t.Errorf("domain-complete: %+v, want %+v", got, want)
	}

	tbl = withDomains([]string{"F", "M"}, 0, 1)
	tbl.Policy.MaxGroups = 2
	shape, err = plan.NewShape(tbl, &ir.Query{Table: "people", GroupBy: []string{"sex", "suburb"}})
	if err != nil {
		t.Fatal(err)
	}
	acc = shape.NewAccumulator()
	for _, c := range []ir.Cell{
		{Group: fixture.Group("F", "North"), Count: 2, InDomain: true},
		{Group: fixture.Group("X", "North"), Count: 1, InDomain: true},
	} {
		if err := acc.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	err = acc.Add(ir.Cell{Group: fixture.Group("M", "South"), Count: 1, InDomain: true})
	if pgerror.SQLState(err) != pgerror.ProgramLimitExceeded || err.Error() != "the query has more than the limit of 2 groups" {
		t.Errorf("a third group past a limit of 2: %v", err)
	}
	want = []ir.Cell{
		{Group: fixture.Group("F", "North"), Count: 2, InDomain: true},
		{Group: fixture.Group("X", "North"), Count: 1, InDomain: false},
	}
	if got := acc.Result(); !reflect.DeepEqual(got, want) {
		t.Errorf("without a product: %+v, want %+v", got, want)
	}

	shape, err = plan.NewShape(fixture.People(), &ir.Query{Table: "people"})
	if err != nil {
		t.Fatal(err)
	}
	if got := shape.NewAccumulator().Result(); !reflect.DeepEqual(got, []ir.Cell{{InDomain: true}}) {
		t.Errorf("a plain COUNT of nothing: %+v, want one zero cell", got)
	}
}

// TestShapeOrder: ORDER BY sorts as SQLite does, numbers numerically on a
// number column (and before what is not a number), text bytewise, NULL
// first, DESC reversing each term, and equal cells keeping their order.
func TestShapeOrder(t *testing.T) {
	cells := func(groups ...[]string) []ir.Cell {
		var out []ir.Cell
		for i, g := range groups {
			out = append(out, ir.Cell{Group: fixture.Group(g...), Count: int64(i)})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		order []ir.Order
		in    []ir.Cell
		want  []int64 // the input positions, in output order
	}{
		{"numbers numerically", []ir.Order{{Column: "age"}},
			cells([]string{"F", "10"}, []string{"F", "9"}, []string{"M", "NULL"}, []string{"M", "2.5"}, []string{"F", "-1"}),
			[]int64{2, 4, 3, 1, 0}},
		{"descending", []ir.Order{{Column: "age", Desc: true}},
			cells([]string{"F", "10"}, []string{"F", "9"}, []string{"M", "NULL"}),
			[]int64{0, 1, 2}},
		{"text bytewise, ties kept", []ir.Order{{Column: "sex"}},
			cells([]string{"f", "1"}, []string{"M", "2"}, []string{"F", "3"}, []string{"M", "4"}),
			[]int64{2, 1, 3, 0}},
		{"two terms", []ir.Order{{Column: "sex", Desc: true}, {Column: "age"}},
			cells([]string{"F", "3"}, []string{"M", "2"}, []string{"F", "1"}, []string{"M", "1"}),
			[]int64{3, 1, 2, 0}},
	} {
		q := &ir.Query{Table: "people", GroupBy: []string{"sex", "age"}, OrderBy: tc.order}
		shape, err := plan.NewShape(fixture.People(), q)
		if err != nil {
			t.Fatal(err)
		}
		shape.Order(tc.in)
		var got []int64
		for _, c := range tc.in {
			got = append(got, c.Count)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: order %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCompareGroupValues: SQLite's order of group values by column type.
func TestCompareGroupValues(t *testing.T) {
	v := func(s string) ir.GroupValue { return fixture.Group(s)[0] }
	for _, tc := range []struct {
		a, b string
		typ  ir.ColumnType
		want int
	}{
		{"NULL", "NULL", ir.TypeInt, 0},
		{"NULL", "-5", ir.TypeInt, -1},
		{"7", "NULL", ir.TypeText, 1},
		{"9", "10", ir.TypeInt, -1},
		{"9", "10", ir.TypeText, 1},
		{"2.5", "10", ir.TypeReal, -1},
		{"1e3", "999", ir.TypeReal, 1},
		{"abc", "10", ir.TypeInt, 1}, // not a number: after the numbers
		{"10", "abc", ir.TypeInt, -1},
		{"abc", "abd", ir.TypeInt, -1},
		{"B", "a", ir.TypeText, -1},
		{"x", "x", ir.TypeText, 0},
	} {
		if got := plan.CompareGroupValues(v(tc.a), v(tc.b), tc.typ); got != tc.want {
			t.Errorf("CompareGroupValues(%s, %s, %s) = %d, want %d", tc.a, tc.b, tc.typ, got, tc.want)
		}
	}
}

// TestGroupKey: a group's key tells apart what its texts alone would not:
// a split of the same letters, NULL and the text "N;", an empty text and
// no value.
func TestGroupKey(t *testing.T) {
	for _, tc := range []struct {
		group []ir.GroupValue
		want  string
	}{
		{fixture.Group("ab", "c"), "2:ab1:c"},
		{fixture.Group("a", "bc"), "1:a2:bc"},
		{fixture.Group("NULL"), "N;"},
		{[]ir.GroupValue{{Text: "N;"}}, "2:N;"},
		{fixture.Group(""), "0:"},
		{nil, ""},
	} {
		if got := plan.GroupKey(tc.group); got != tc.want {
			t.Errorf("GroupKey(%+v) = %q, want %q", tc.group, got, tc.want)
		}
	}
}

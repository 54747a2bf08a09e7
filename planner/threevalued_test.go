package planner

import (
	"reflect"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
)

// The random differential test also draws the comparisons decided for
// every value (falseUnlessNull, trueUnlessNull), which evalPred evaluates
// as the AND and OR of comparisons they are: under the generator's NOTs
// and ORs, over columns a tenth NULL, every backend must keep them unknown
// where the column is NULL.
func init() {
	leafKinds = append(leafKinds, leafKind{
		draw: func(g fixture.Gen) ir.Pred {
			col, isInt := g.Column()
			t := ir.TypeText
			if isInt {
				t = ir.TypeInt
			}
			if g.R.IntN(2) == 0 {
				return falseUnlessNull(col, t)
			}
			return trueUnlessNull(col, t)
		},
		// Drawn as an AND or an OR of comparisons, which evalPred reads
		// itself: no kind of its own to recognise.
		eval: func(ir.Pred, fixture.Row) (tri, bool) { return triUnknown, false },
	})
}

// TestDecidedComparisonsAreUnknownForNULL: in Go's reference evaluation,
// which every backend is held to, a decided comparison is false (or true)
// for a value and unknown for NULL, and so is its NOT.
func TestDecidedComparisonsAreUnknownForNULL(t *testing.T) {
	for _, tc := range []struct {
		pred       ir.Pred
		value, not tri
	}{
		{falseUnlessNull("age", ir.TypeInt), triFalse, triTrue},
		{trueUnlessNull("age", ir.TypeInt), triTrue, triFalse},
		{falseUnlessNull("sex", ir.TypeText), triFalse, triTrue},
		{trueUnlessNull("sex", ir.TypeText), triTrue, triFalse},
	} {
		for _, row := range []fixture.Row{{"age": int64(-3), "sex": ""}, {"age": int64(0), "sex": "F"}, {"age": int64(7), "sex": "Z"}} {
			if got := evalPred(tc.pred, row); got != tc.value {
				t.Errorf("%#v on %v: %v, want %v", tc.pred, row, got, tc.value)
			}
			if got := evalPred(&ir.Not{Inner: tc.pred}, row); got != tc.not {
				t.Errorf("NOT %#v on %v: %v, want %v", tc.pred, row, got, tc.not)
			}
		}
		null := fixture.Row{"age": nil, "sex": nil}
		if evalPred(tc.pred, null) != triUnknown || evalPred(&ir.Not{Inner: tc.pred}, null) != triUnknown {
			t.Errorf("%#v and its NOT on NULL: want unknown", tc.pred)
		}
	}
}

// TestComparisonsWithNULL: a comparison with NULL, written or bound, reads
// as the condition it means under three-valued logic (false, or true
// under an odd number of NOTs, unless the column is NULL), and IS [NOT]
// DISTINCT FROM as its two-valued condition.
func TestComparisonsWithNULL(t *testing.T) {
	cat := testCatalog(nil)
	text, integer := ir.TypeText, ir.TypeInt
	notNull := func(col string) ir.Pred { return &ir.IsNull{Column: col, Negate: true} }
	eq := func(col string, v ir.Literal) ir.Pred { return &ir.Compare{Column: col, Op: "=", Value: v} }
	f, thirty := ir.Literal{Kind: ir.LitText, Text: "F"}, ir.Literal{Kind: ir.LitInt, Int: 30}
	for _, tc := range []struct {
		where string
		args  []*string
		want  ir.Pred
	}{
		{"sex = NULL", nil, falseUnlessNull("sex", text)},
		{"NULL <> sex", nil, falseUnlessNull("sex", text)},
		{"NOT (sex = NULL)", nil, &ir.Not{Inner: trueUnlessNull("sex", text)}},
		{"age > $1", []*string{nil}, falseUnlessNull("age", integer)},
		{"NOT (age > $1)", []*string{nil}, &ir.Not{Inner: trueUnlessNull("age", integer)}},
		{"sex IN ('F', NULL)", nil, &ir.In{Column: "sex", Values: []ir.Literal{f}}},
		{"sex NOT IN ('F', NULL)", nil, &ir.Not{Inner: trueUnlessNull("sex", text)}},
		{"NOT (sex NOT IN ('F', NULL))", nil, &ir.Not{Inner: &ir.In{Column: "sex", Values: []ir.Literal{f}, Negate: true}}},
		{"sex IN (NULL, NULL)", nil, falseUnlessNull("sex", text)},
		{"age BETWEEN 20 AND NULL", nil, falseUnlessNull("age", integer)},
		{"age NOT BETWEEN NULL AND 30", nil, &ir.Not{Inner: &ir.Compare{Column: "age", Op: "<=", Value: thirty}}},
		{"age BETWEEN NULL AND NULL", nil, falseUnlessNull("age", integer)},
		{"age IS NOT DISTINCT FROM NULL", nil, &ir.IsNull{Column: "age"}},
		{"age IS DISTINCT FROM $1", []*string{nil}, &ir.Not{Inner: &ir.IsNull{Column: "age"}}},
		{"age IS NOT DISTINCT FROM 30", nil, &ir.And{Left: eq("age", thirty), Right: notNull("age")}},
		{"age IS DISTINCT FROM 30", nil, &ir.Not{Inner: &ir.And{Left: eq("age", thirty), Right: notNull("age")}}},
	} {
		st, err := Parse("SELECT COUNT(*) FROM people WHERE "+tc.where, tc.args, cat)
		if err != nil {
			t.Errorf("%s: %v", tc.where, err)
			continue
		}
		if got := st.(*ir.Query).Where; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: read as %#v, want %#v", tc.where, got, tc.want)
		}
	}
}

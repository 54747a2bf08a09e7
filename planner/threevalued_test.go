package planner

import (
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

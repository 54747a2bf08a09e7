package planner

import (
	"math/rand/v2"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
)

// outside is a new predicate kind, added as a kind is added: `column
// OUTSIDE lo AND hi`, true when the value is below lo or above hi. It means
// what `column < lo OR column > hi` means, so it is one file: the type, its
// Lower, and (for the differential test) how to draw one and what it means
// in Go. No backend, and not the differential test, changed for it.
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

func init() {
	leafKinds = append(leafKinds, leafKind{
		draw: func(g fixture.Gen) ir.Pred {
			col, isInt := g.Column()
			return &outside{Column: col, Lo: g.Lit(isInt), Hi: g.Lit(isInt)}
		},
		eval: func(p ir.Pred, row fixture.Row) (tri, bool) {
			o, ok := p.(*outside)
			if !ok {
				return triUnknown, false
			}
			x := row[o.Column]
			return triOr(compareValues(x, "<", o.Lo.Value()), compareValues(x, ">", o.Hi.Value())), true
		},
	})
}

// The new kind is answered by every backend the differential test runs
// (SQLite, the snapshot and its row-by-row paths, PostgreSQL where a server
// is at hand) as Go means it; this checks that the test draws it: one
// leaf in seven is a registered kind, so about 100 of 700 seeded draws (a
// standard deviation of about 9).
func TestDerivedKindIsDrawn(t *testing.T) {
	drawn := 0
	g := newPredGen(rand.New(rand.NewPCG(21, 22)))
	for range 700 {
		if _, ok := g.Leaf().(*outside); ok {
			drawn++
		}
	}
	if drawn < 50 {
		t.Errorf("the differential test drew the new kind %d times in 700 leaves; about 100 expected", drawn)
	}
}

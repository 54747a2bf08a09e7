package grouped

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
)

func testStore(t testing.TB, model ir.KeyModel) (*Store, *ir.Table) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	var groups []ir.Group
	for v := int64(1); v <= 40; v++ {
		for _, sex := range []string{"F", "M"} {
			groups = append(groups, ir.Group{Values: []any{v, sex}, Count: int64(rng.IntN(60)), Key: rng.Uint32()})
		}
	}
	s, err := New(ir.GroupedTable{Name: "people", Unit: "id", Columns: []ir.GroupedColumn{{Name: "age", Type: ir.TypeInt}, {Name: "sex", Type: ir.TypeText}},
		Groups: groups, Model: model, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	tbl := &ir.Table{Name: "people", PrivacyUnit: "id", Policy: ir.DefaultPolicy(), UnitKeyed: true, Columns: map[string]*ir.Column{
		"id": {Name: "id", Type: ir.TypeInt}, "age": {Name: "age", Type: ir.TypeInt}, "sex": {Name: "sex", Type: ir.TypeText}}}
	return s, tbl
}

func ageLit(n int64) ir.Literal { return ir.Literal{Kind: ir.LitInt, Int: n} }

// cellOf runs COUNT(*) WHERE where and returns its one cell.
func cellOf(t *testing.T, s *Store, tbl *ir.Table, where ir.Pred) ir.Cell {
	t.Helper()
	res, err := s.Run(context.Background(), tbl, &ir.Query{Table: "people", Where: where}, ir.Needs{Key: true}, []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 1 || res.Path != ir.PathGrouped {
		t.Fatalf("result %+v, want one cell from the grouped backend", res)
	}
	return res.Cells[0]
}

// The same contributors get the same cell whatever the predicate, under
// both key models; the additive key of a union is the sum of its parts'
// keys, the independent key is not.
func TestKeysFollowTheContributors(t *testing.T) {
	for _, model := range []ir.KeyModel{ir.AdditiveKeys, ir.IndependentKeys} {
		s, tbl := testStore(t, model)
		a := cellOf(t, s, tbl, &ir.In{Column: "age", Values: []ir.Literal{ageLit(3), ageLit(4)}})
		b := cellOf(t, s, tbl, &ir.Between{Column: "age", Lo: ageLit(3), Hi: ageLit(4)})
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%v: the same rows got cells %+v and %+v", model, a, b)
		}
		p3 := cellOf(t, s, tbl, &ir.Compare{Column: "age", Op: "=", Value: ageLit(3)})
		p4 := cellOf(t, s, tbl, &ir.Compare{Column: "age", Op: "=", Value: ageLit(4)})
		if a.Count != p3.Count+p4.Count || a.Units != a.Count {
			t.Errorf("%v: count %d (units %d), parts %d + %d", model, a.Count, a.Units, p3.Count, p4.Count)
		}
		if additive := a.Key == p3.Key+p4.Key; additive != (model == ir.AdditiveKeys) {
			t.Errorf("%v: union key %d, parts %d + %d", model, a.Key, p3.Key, p4.Key)
		}
	}
}

func TestRunRefusesWhatItDoesNotModel(t *testing.T) {
	s, tbl := testStore(t, ir.AdditiveKeys)
	for _, q := range []*ir.Query{
		{Table: "people", GroupBy: []string{"sex"}},
		{Table: "people", Agg: ir.CountDistinct},
	} {
		if _, err := s.Run(context.Background(), tbl, q, ir.Needs{}, nil); pgerror.SQLState(err) != pgerror.FeatureNotSupported {
			t.Errorf("%+v: %v, want %s", q, err, pgerror.FeatureNotSupported)
		}
	}
}

func TestNewRefusesMistypedGroups(t *testing.T) {
	_, err := New(ir.GroupedTable{Name: "t", Columns: []ir.GroupedColumn{{Name: "age", Type: ir.TypeInt}}, Groups: []ir.Group{{Values: []any{"x"}, Count: 1}}})
	if err == nil {
		t.Error("a text value in an integer column was accepted")
	}
}

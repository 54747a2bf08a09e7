package ir_test

import (
	"testing"

	"countwall/ir"
)

// TestColumnTypeNames: the names a column type is shown by, in messages and
// in the catalog answers clients read; a type out of range reads as text.
func TestColumnTypeNames(t *testing.T) {
	for _, tc := range []struct {
		typ  ir.ColumnType
		want string
	}{
		{ir.TypeInt, "integer"},
		{ir.TypeReal, "real"},
		{ir.TypeText, "text"},
		{ir.ColumnType(7), "text"},
	} {
		if got := tc.typ.String(); got != tc.want {
			t.Errorf("ColumnType(%d).String() = %q, want %q", int(tc.typ), got, tc.want)
		}
	}
}

// TestDomainSize: a range's cells are its integers, both ends included; a
// list's are its categories.
func TestDomainSize(t *testing.T) {
	for _, tc := range []struct {
		name   string
		domain ir.Domain
		want   int64
	}{
		{"ages 18 to 65", ir.Domain{IsRange: true, Min: 18, Max: 65}, 48},
		{"one value", ir.Domain{IsRange: true, Min: 7, Max: 7}, 1},
		{"across zero", ir.Domain{IsRange: true, Min: -3, Max: 3}, 7},
		{"three categories", ir.Domain{Categories: []string{"F", "M", "X"}}, 3},
		{"no categories", ir.Domain{}, 0},
		{"a range ignores categories", ir.Domain{IsRange: true, Min: 1, Max: 2, Categories: []string{"a"}}, 2},
	} {
		if got := tc.domain.Size(); got != tc.want {
			t.Errorf("%s: Size() = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestDefaultPolicy: what a table accepts when the config says nothing, as
// the config reference (docs/operator.md) documents it: OR and <> allowed, LIKE and
// arithmetic not, the unit not in WHERE, and the limits.
func TestDefaultPolicy(t *testing.T) {
	want := ir.Policy{
		UnitInWhere:       false,
		MaxInList:         50,
		MaxConditions:     20,
		MaxGroups:         10000,
		AllowOr:           true,
		AllowNotEqual:     true,
		AllowLike:         false,
		AllowMath:         false,
		Strict:            false,
		MaxStatementBytes: 8192,
	}
	if got := ir.DefaultPolicy(); got != want {
		t.Errorf("DefaultPolicy() = %+v, want %+v", got, want)
	}
}

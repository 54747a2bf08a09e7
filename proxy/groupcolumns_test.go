package proxy

import (
	"testing"

	"countwall/ir"
)

// TestGroupColumnTypes: a group column has its catalog type, or its
// cast's, as PostgreSQL gives it.
func TestGroupColumnTypes(t *testing.T) {
	table := &ir.Table{Name: "p", Columns: map[string]*ir.Column{
		"age": {Name: "age", Type: ir.TypeInt}, "score": {Name: "score", Type: ir.TypeReal}, "sex": {Name: "sex", Type: ir.TypeText}}}
	for _, tc := range []struct {
		col, cast string
		want      ColumnType
	}{
		{"age", "", ColumnInt8}, {"score", "", ColumnFloat8}, {"sex", "", ColumnText},
		{"age", "int8", ColumnInt8}, {"score", "float8", ColumnFloat8}, {"age", "text", ColumnText},
		{"age", "varchar", ColumnVarchar}, {"sex", "varchar", ColumnVarchar}, {"gone", "", ColumnText},
	} {
		if got := groupColumnType(table, tc.col, tc.cast); got != tc.want {
			t.Errorf("%s cast to %q: %v, want %v", tc.col, tc.cast, got, tc.want)
		}
	}
}

// TestGroupValue: each group's value as its column sends it; Text keeps
// the group's own text for the audit, except for a real cast to text,
// which is float8out's. A stored value that is no number of an integer
// column is NULL.
func TestGroupValue(t *testing.T) {
	for _, tc := range []struct {
		typ    ColumnType
		stored ir.ColumnType
		in     ir.GroupValue
		want   Value
	}{
		{ColumnInt8, ir.TypeInt, ir.GroupValue{Text: "30"}, Value{Text: "30", Int: 30}},
		{ColumnInt8, ir.TypeInt, ir.GroupValue{Text: "-9223372036854775808"}, Value{Text: "-9223372036854775808", Int: -9223372036854775808}},
		{ColumnInt8, ir.TypeInt, ir.GroupValue{Null: true}, Value{Null: true}},
		{ColumnInt8, ir.TypeInt, ir.GroupValue{Text: "1.5"}, Value{Null: true}},
		{ColumnInt8, ir.TypeInt, ir.GroupValue{Text: "1e+30"}, Value{Null: true}},
		{ColumnFloat8, ir.TypeReal, ir.GroupValue{Text: "2.5"}, Value{Text: "2.5", Float: 2.5}},
		{ColumnFloat8, ir.TypeReal, ir.GroupValue{Text: "1e+06"}, Value{Text: "1e+06", Float: 1e6}},
		{ColumnFloat8, ir.TypeReal, ir.GroupValue{Null: true}, Value{Null: true}},
		{ColumnText, ir.TypeReal, ir.GroupValue{Text: "1e+06"}, Value{Text: "1000000"}},
		{ColumnVarchar, ir.TypeReal, ir.GroupValue{Text: "1e-05"}, Value{Text: "1e-05"}},
		{ColumnText, ir.TypeText, ir.GroupValue{Text: "1e+06"}, Value{Text: "1e+06"}},
		{ColumnVarchar, ir.TypeInt, ir.GroupValue{Text: "7"}, Value{Text: "7"}},
	} {
		if got := groupValue(tc.typ, tc.stored, tc.in); got != tc.want {
			t.Errorf("%v (%v) %+v: %+v, want %+v", tc.typ, tc.stored, tc.in, got, tc.want)
		}
	}
}

package proxy

import (
	"bytes"
	"testing"
)

func TestValueFormat(t *testing.T) {
	tests := []struct {
		v    Value
		t    ColumnType
		want string
	}{
		{Value{Null: true}, ColumnInt8, "NULL"},
		{Value{Int: -42}, ColumnInt8, "-42"},
		{Value{Float: 12.5}, ColumnFloat8, "12.5"},
		{Value{Float: 1e21}, ColumnFloat8, "1000000000000000000000"},
		{Value{Text: "F"}, ColumnText, "F"},
	}
	for _, tt := range tests {
		if got := tt.v.Format(tt.t); got != tt.want {
			t.Errorf("%+v as %d: %q, want %q", tt.v, tt.t, got, tt.want)
		}
	}
}

func TestResultWriteTable(t *testing.T) {
	tests := []struct {
		name string
		res  Result
		want string
	}{
		{"tag only", Result{Tag: "SET"}, "SET\n"},
		{"group by with a withheld count and a notice", Result{
			Columns:    []Column{{"sex", ColumnText}, {"count", ColumnInt8}},
			Rows:       [][]Value{{{Text: "F"}, {Int: 1320}}, {{Null: true}, {Null: true}}},
			Suppressed: []bool{false, true},
			Notice:     "charged epsilon 0.1 (dp)",
		}, " sex  | count\n" +
			"------+-------\n" +
			" F    | 1320\n" +
			" NULL | NULL\n" +
			"(2 rows)\n" +
			"NOTICE: charged epsilon 0.1 (dp)\n"},
		{"one row", Result{
			Columns: []Column{{"count", ColumnInt8}},
			Rows:    [][]Value{{{Int: 20000}}},
		}, " count\n" +
			"-------\n" +
			" 20000\n" +
			"(1 row)\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		tt.res.WriteTable(&b)
		if b.String() != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, b.String(), tt.want)
		}
	}
}

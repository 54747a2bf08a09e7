package pgwire

import (
	"bytes"
	"testing"

	"countwall/proxy"
)

// The encoder reuses its messages and buffer from row to row: each row's
// values are exactly that row's, NULL stays nil and an empty text stays a
// present, empty value, in text and binary form.
func TestEncoderRowsAreExactAcrossReuse(t *testing.T) {
	cols := []proxy.Column{
		{Name: "sex", Type: proxy.ColumnText},
		{Name: "count", Type: proxy.ColumnInt8},
		{Name: "noisy", Type: proxy.ColumnFloat8},
	}
	var e encoder
	for _, tc := range []struct {
		name    string
		row     []proxy.Value
		formats []int16
		want    [][]byte
	}{
		{"text", []proxy.Value{{Text: "F"}, {Int: 42}, {Float: 1.5}}, nil,
			[][]byte{[]byte("F"), []byte("42"), []byte("1.5")}},
		{"empty text and NULL", []proxy.Value{{Text: ""}, {Null: true}, {Float: -0.25}}, nil,
			[][]byte{{}, nil, []byte("-0.25")}},
		{"binary", []proxy.Value{{Text: "M"}, {Int: 258}, {Null: true}}, []int16{0, 1, 1},
			[][]byte{[]byte("M"), {0, 0, 0, 0, 0, 0, 1, 2}, nil}},
		{"long text after short", []proxy.Value{{Text: string(bytes.Repeat([]byte("x"), 1000))}, {Int: -7}, {Float: 3}}, nil,
			[][]byte{bytes.Repeat([]byte("x"), 1000), []byte("-7"), []byte("3")}},
	} {
		dr := e.dataRow(cols, tc.row, tc.formats)
		if len(dr.Values) != len(tc.want) {
			t.Fatalf("%s: %d values, want %d", tc.name, len(dr.Values), len(tc.want))
		}
		for i, want := range tc.want {
			got := dr.Values[i]
			if (got == nil) != (want == nil) || !bytes.Equal(got, want) {
				t.Errorf("%s: value %d is %q (nil %v), want %q (nil %v)", tc.name, i, got, got == nil, want, want == nil)
			}
		}
	}
	rd := e.rowDescription(cols, []int16{1})
	for i, f := range rd.Fields {
		if string(f.Name) != cols[i].Name || f.Format != 1 || f.DataTypeOID != typeOID(cols[i].Type) {
			t.Errorf("field %d: %q format %d oid %d", i, f.Name, f.Format, f.DataTypeOID)
		}
	}
	if cc := e.commandComplete("SELECT 1"); string(cc.CommandTag) != "SELECT 1" {
		t.Errorf("command tag %q", cc.CommandTag)
	}
}

package pgtypes

import (
	"errors"
	"reflect"
	"testing"
)

func strs(vals ...string) []*string {
	out := make([]*string, len(vals))
	for i, v := range vals {
		if v != "\x00" {
			out[i] = &v
		}
	}
	return out
}

// null stands for a NULL element in strs.
const null = "\x00"

// TestParseArray: array_in's reading of a one-dimensional array, quoting,
// escapes, NULL (unquoted, any case) and spaces included; each input below
// was read by PostgreSQL 15 ('...'::text[]) to the elements given.
func TestParseArray(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []*string
	}{
		{"{}", strs()},
		{" { } ", strs()},
		{"{a}", strs("a")},
		{"{a b}", strs("a b")},
		{"{ a b , c }", strs("a b", "c")},
		{`{ " a " , NULL , null , "NULL" }`, strs(" a ", null, null, "NULL")},
		{"{nuLL}", strs(null)},
		{`{\NULL}`, strs("NULL")},
		{`{a\,b}`, strs("a,b")},
		{`{"\"q\\"}`, strs(`"q\`)},
		{`{a\ }`, strs("a ")},
		{`{""}`, strs("")},
		{"{1,2,3}", strs("1", "2", "3")},
		{"{Zürich,東京}", strs("Zürich", "東京")},
		{"[1:3]={1,2,3}", strs("1", "2", "3")},
		{"[1]={x}", strs("x")},
		{"[2:3]={x,y}", strs("x", "y")},
		{"[-1:0] = {x,y}", strs("x", "y")},
	} {
		got, err := ParseArray(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseArray(%q) = %v, %v; want %v", tc.in, show(got), err, show(tc.want))
		}
	}
}

func show(elems []*string) []string {
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = "NULL"
		if e != nil {
			out[i] = "<" + *e + ">"
		}
	}
	return out
}

// TestParseArrayRefuses: what array_in refuses, with PostgreSQL 15's
// DETAIL for each (22P02, 2202E for bounds out of order); more than one
// dimension, which PostgreSQL reads, is ErrNestedArray.
func TestParseArrayRefuses(t *testing.T) {
	for _, tc := range []struct {
		in, detail string
		bounds     bool
		nested     bool
	}{
		{in: "", detail: `Array value must start with "{" or dimension information.`},
		{in: "0", detail: `Array value must start with "{" or dimension information.`},
		{in: "{0,", detail: "Unexpected end of input."},
		{in: "{", detail: "Unexpected end of input."},
		{in: `{"a\`, detail: "Unexpected end of input."},
		{in: `{a\`, detail: "Unexpected end of input."},
		{in: `{"a`, detail: "Unexpected end of input."},
		{in: "{,}", detail: `Unexpected "," character.`},
		{in: "{a,}", detail: `Unexpected "}" character.`},
		{in: "{0}x", detail: "Junk after closing right brace."},
		{in: "{}x", detail: "Junk after closing right brace."},
		{in: `{"a"b}`, detail: "Unexpected array element."},
		{in: `{a"b"}`, detail: "Unexpected array element."},
		{in: `{"a" "b"}`, detail: "Unexpected array element."},
		{in: `{a "b"}`, detail: "Unexpected array element."},
		{in: `{"a"\b}`, detail: `Unexpected "\" character.`},
		{in: "{1,{2}}", detail: `Unexpected "{" character.`},
		{in: "[1:2]={1,2,3}", detail: "Specified array dimensions do not match array contents."},
		{in: "[0:0]={}", detail: "Specified array dimensions do not match array contents."},
		{in: "[1:3={1}", detail: `Missing "]" after array dimensions.`},
		{in: "[1:2]", detail: `Missing "=" after array dimensions.`},
		{in: "[1:2]x{1,2}", detail: `Missing "=" after array dimensions.`},
		{in: "[a]={1}", detail: `"[" must introduce explicitly-specified array dimensions.`},
		{in: " [ 1 : 2 ] = {1,2}", detail: `"[" must introduce explicitly-specified array dimensions.`},
		{in: "[3:1]={}", bounds: true},
		{in: "{{1,2},{3,4}}", nested: true},
		{in: "[1:2][1:1]={{1},{2}}", nested: true},
	} {
		_, err := ParseArray(tc.in)
		var ae *ArrayError
		switch {
		case tc.nested:
			if !errors.Is(err, ErrNestedArray) {
				t.Errorf("ParseArray(%q): %v, want ErrNestedArray", tc.in, err)
			}
		case !errors.As(err, &ae) || !errors.Is(err, ErrMalformedArray) || ae.Detail != tc.detail || ae.Bounds != tc.bounds:
			t.Errorf("ParseArray(%q): %#v, want detail %q (bounds %v)", tc.in, err, tc.detail, tc.bounds)
		}
	}
}

// TestFormatArray: array_out's quoting (an empty string, NULL spelt as a
// string, spaces, braces, commas, quotes and backslashes are quoted;
// quotes and backslashes escaped), and every array it writes reads back as
// its elements.
func TestFormatArray(t *testing.T) {
	for _, tc := range []struct {
		elems []*string
		want  string
	}{
		{strs(), "{}"},
		{strs("a", "b"), "{a,b}"},
		{strs(null, "NULL", "null", ""), `{NULL,"NULL","null",""}`},
		{strs("a b", " a", "a,b", "{x}", `q"q`, `b\s`), `{"a b"," a","a,b","{x}","q\"q","b\\s"}`},
		{strs("1", "-2.5", "東京"), "{1,-2.5,東京}"},
	} {
		got := FormatArray(tc.elems)
		if got != tc.want {
			t.Errorf("FormatArray(%v) = %s, want %s", show(tc.elems), got, tc.want)
		}
		back, err := ParseArray(got)
		if err != nil || !reflect.DeepEqual(back, tc.elems) {
			t.Errorf("%s reads back as %v, %v", got, show(back), err)
		}
	}
}

package plan_test

import (
	"testing"
	"time"

	"countwall/ir"
	"countwall/planner/plan"
)

// TestGroupText: the text a text column's GROUP BY reads each storage
// class as, so that 1, 1.0, '1' and x'31' are one group.
func TestGroupText(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
		ok   bool
	}{
		{nil, "", false},
		{int64(1), "1", true},
		{1.0, "1", true},
		{"1", "1", true},
		{[]byte("1"), "1", true},
		{int64(-42), "-42", true},
		{0.1, "0.1", true},
		{1e21, "1e+21", true},
		{"", "", true},
		{true, "true", true},
	} {
		got, ok := plan.GroupText(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("GroupText(%#v) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestGroupValueOf: how a group value read from a database row is
// rendered: NULL apart, numbers in their shortest form, text and blobs as
// their bytes, a time as RFC 3339.
func TestGroupValueOf(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want ir.GroupValue
	}{
		{nil, ir.GroupValue{Null: true}},
		{int64(30), ir.GroupValue{Text: "30"}},
		{2.5, ir.GroupValue{Text: "2.5"}},
		{3.0, ir.GroupValue{Text: "3"}},
		{"North", ir.GroupValue{Text: "North"}},
		{[]byte{0xff, 'a'}, ir.GroupValue{Text: "\xffa"}},
		{time.Date(2024, 6, 11, 8, 30, 0, 5, time.UTC), ir.GroupValue{Text: "2024-06-11T08:30:00.000000005Z"}},
		{int32(7), ir.GroupValue{Text: "7"}},
	} {
		if got := plan.GroupValueOf(tc.in); got != tc.want {
			t.Errorf("GroupValueOf(%#v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

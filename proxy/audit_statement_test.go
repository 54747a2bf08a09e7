package proxy

import (
	"reflect"
	"testing"
)

// TestAuditRecordsOnlyWhatTheWireSent: the wire sends a withheld count as
// a plain 0, so the audit, and the monitor's decisions read from it, must
// not keep the suppressed mark either. Under bounded and cellkey the mark
// tells a count at or below the suppression threshold from a larger count
// that the noise pulled down to 0, which the analyst never saw; two
// answers that were identical on the wire must be recorded identically.
func TestAuditRecordsOnlyWhatTheWireSent(t *testing.T) {
	cols := []Column{{Name: "sex", Type: ColumnText}, {Name: "count", Type: ColumnInt8}}
	rows := func() [][]Value { return [][]Value{{{Text: "F"}, {Int: 0}}, {{Text: "M"}, {Int: 7}}} }
	suppressed := &Result{Columns: cols, Rows: rows(), Suppressed: []bool{true, false}, Tag: "SELECT 2"}
	noisedToZero := &Result{Columns: cols, Rows: rows(), Suppressed: []bool{false, false}, Tag: "SELECT 2"}
	a, b := releasedCells(suppressed), releasedCells(noisedToZero)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("the same rows on the wire were recorded as %+v and %+v", a, b)
	}
	if len(a) != 2 || a[0].Value != 0 || a[1].Value != 7 || a[0].Group[0].Text != "F" {
		t.Fatalf("recorded %+v", a)
	}
}

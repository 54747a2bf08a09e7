package state

import (
	"context"
	"reflect"
	"testing"

	"countwall/proxy/state/release"
)

func TestAuditCodecRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		name   string
		consts []release.Constant
		cells  []release.Cell
		bytes  int // encoded size of constants plus cells
	}{
		{"threshold query answered 1", []release.Constant{{Text: "17"}, {Text: "20"}, {Text: "35"}},
			[]release.Cell{{Value: 1}}, 6 + 3},
		{"noisy float answer", []release.Constant{{Text: "-4"}, {Text: "2.5"}, {Text: "it's", String: true}, {Text: "007"}},
			[]release.Cell{{Value: 12.75, IsFloat: true}}, 1 + 4 + 5 + 4 + 11},
		{"integral float answer", nil, []release.Cell{{Value: 3, IsFloat: true}}, 3},
		{"grouped with NULL and suppressed", []release.Constant{{Text: "9223372036854775807"}},
			[]release.Cell{{Group: []release.Datum{{Text: "F"}, {Null: true}}, Value: 0, Suppressed: true},
				{Group: []release.Datum{{Text: "M"}, {Text: ""}}, Value: -3}}, 20 + 1 + 5 + 5},
		{"nothing", nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cb, _ := encodeConstants(tc.consts, nil)
			xb := encodeCells(tc.cells)
			if got := len(cb) + len(xb); got != tc.bytes {
				t.Errorf("encoded in %d bytes, want %d", got, tc.bytes)
			}
			consts, err := decodeConstants(cb, nil)
			if err != nil || !reflect.DeepEqual(consts, tc.consts) {
				t.Errorf("constants %+v (%v), want %+v", consts, err, tc.consts)
			}
			cells, err := decodeCells(xb)
			if err != nil || !reflect.DeepEqual(cells, tc.cells) {
				t.Errorf("cells %+v (%v), want %+v", cells, err, tc.cells)
			}
		})
	}
	for _, bad := range [][]byte{{0x09, 'a'}, {0x02, 1, 2}, {0xff}} {
		if _, err := decodeConstants(bad, nil); err == nil {
			t.Errorf("decodeConstants(%x) accepted a malformed blob", bad)
		}
	}
	if _, err := decodeCells([]byte{0, 0, 0x02}); err == nil {
		t.Error("decodeCells accepted a truncated float")
	}
}

// TestAuditRowKeepsStatementAndCells: a row read back holds what was
// written, and statements of one shape share one interned shape row.
func TestAuditRowKeepsStatementAndCells(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, newStatePath(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const shape = "select count(*) > $1 from people where age between $2 and $3 and suburb = $4"
	for b := 0; b < 5; b++ {
		e := AuditEntry{Analyst: "mallory", Fingerprint: "00112233445566ff", Kind: "query", Mechanism: "idp", Outcome: OutcomeAnswered,
			ChargeKind: "idp", Epsilon: 1e-4, Shape: shape,
			Constants: []release.Constant{{Text: string(rune('0' + b))}, {Text: "20"}, {Text: "35"}, {Text: "suburb_0015", String: true}},
			Cells:     []release.Cell{{Value: float64(b % 2), IsFloat: true}}}
		if err := db.AuditDurable(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.ListAudit(ctx, AuditFilter{Analyst: "mallory"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("read %d rows, want 5", len(got))
	}
	r := got[3]
	if r.Shape != shape || r.Constants[0].Text != "3" || r.Constants[3] != (release.Constant{Text: "suburb_0015", String: true}) || r.Cells[0].Value != 1 || !r.Cells[0].IsFloat ||
		r.Fingerprint != "" || r.Epsilon != 1e-4 || r.ChargeKind != "idp" || r.ID == 0 {
		t.Errorf("row read back as %+v", r)
	}
	var shapes, contexts, texts int
	if err := db.SQL().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM audit_shape), (SELECT count(*) FROM audit_context), (SELECT count(*) FROM audit_text)`).Scan(&shapes, &contexts, &texts); err != nil {
		t.Fatal(err)
	}
	if shapes != 1 || contexts != 1 || texts != 1 {
		t.Errorf("%d shapes, %d contexts and %d strings stored for one of each", shapes, contexts, texts)
	}
}

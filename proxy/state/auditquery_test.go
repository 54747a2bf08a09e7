package state

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"countwall/proxy/state/release"
)

func num(s string) release.Constant { return release.Constant{Text: s} }
func str(s string) release.Constant { return release.Constant{Text: s, String: true} }

// queryEntry is an answered row of a threshold search: the statement's
// constants are the threshold 5 and a, b, c; the record holds AtLeast 6
// (no constant), a float written 30.0 that reads 30, and text values.
func queryEntry(a, b string) AuditEntry {
	at := int64(6)
	q := &release.Query{Table: "my where t", GroupBy: []string{"a and b"}, AtLeast: &at,
		Bounds: &release.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 2},
		Where: []release.Conjunct{
			release.Compare("a and b", release.OpEq, str(a)),
			release.Between("age", true, num(b), num("40")),
			release.Or([]release.Conjunct{release.In("zip", false, []release.Constant{str("suburb_1"), str(a)}),
				release.And([]release.Conjunct{release.IsNull("zip", false), release.Compare("income", release.OpGt, num("30"))})}),
			release.Not([]release.Conjunct{release.Compare("sex", release.OpLike, str("F%")), release.IsNull("say \"x\"\t\\", true)}),
			release.Expr("age", "abs(age - 40)", release.OpLt, num("5")),
		}}
	return AuditEntry{Analyst: "mallory", Kind: "query", Mechanism: "idp", Outcome: OutcomeAnswered,
		Shape:     `select "a and b", count(*) > $1 from "my where t" where ...`,
		Constants: []release.Constant{num("5"), str(a), num(b), num("40"), str("suburb_1"), str(a), num("30.0"), str("F%"), num("40"), num("5")},
		Query:     q}
}

// TestAuditRowKeepsQuery: the structured record reads back as written,
// each conjunct's text made again by its constructor; rows of one shape
// share one interned template and keep only what no constant holds.
func TestAuditRowKeepsQuery(t *testing.T) {
	ctx := context.Background()
	db := openAuditDB(t)
	entries := []AuditEntry{queryEntry("x y", "20"), queryEntry("it's", "21"), queryEntry("x y", "22"),
		{Analyst: "mallory", Kind: "query", Mechanism: "idp", Outcome: OutcomeAnswered, Shape: "select count(*) from t",
			Query: &release.Query{Table: "t"}},
		{Analyst: "mallory", Kind: "set", Mechanism: "idp", Outcome: OutcomeAnswered, Fingerprint: "00112233445566ff"}}
	for _, e := range entries {
		if err := db.AuditDurable(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.ListAudit(ctx, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(entries) {
		t.Fatalf("read %d rows, want %d", len(got), len(entries))
	}
	for i, e := range entries {
		if want, have := mustMarshal(t, e.Query), mustMarshal(t, got[i].Query); have != want {
			t.Errorf("row %d read back\n %s\nwant\n %s", i, have, want)
		}
	}
	if txt := got[1].Query.Where[0].Text; txt != `"a and b" = 'it''s'` {
		t.Errorf("first conjunct reads %s", txt)
	}
	var export bytes.Buffer
	if _, err := db.ExportAudit(ctx, &export, AuditFilter{}); err != nil {
		t.Fatal(err)
	}
	exported, err := release.Read(&export)
	if err != nil || len(exported) != len(entries) {
		t.Fatalf("export read back %d releases (%v)", len(exported), err)
	}
	for i, e := range entries {
		if want, have := mustMarshal(t, e.Query), mustMarshal(t, exported[i].Query); have != want {
			t.Errorf("row %d exported\n %s\nwant\n %s", i, have, want)
		}
	}
	var templates, size int
	if err := db.SQL().QueryRowContext(ctx, `SELECT count(DISTINCT l.query), (SELECT sum(length(query)) FROM audit_log WHERE id <= 3)
		FROM audit_log l WHERE l.id <= 3`).Scan(&templates, &size); err != nil {
		t.Fatal(err)
	}
	// Each row: the template's id (1 byte) and the value no constant
	// holds, income's 30 (2 bytes); AtLeast 6 is one more than the
	// threshold's constant 5.
	if size != 3*3 {
		t.Errorf("the three threshold rows keep %d bytes of query, want 9", size)
	}
	if templates != 1 {
		t.Errorf("the three threshold rows keep %d distinct query columns, want 1", templates)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAuditQueryRefusesMalformed(t *testing.T) {
	r := &queryReader{resolve: func(id int64) (string, error) {
		return map[int64]string{1: `{"t":"t","w":[{"o":"=","c":"a","v":["$3"]}]}`,
			2: `{"t":"t","w":[{"o":"between","c":"a","v":["#"]}]}`,
			3: `{"t":"t","w":[{"o":"~","c":"a"}]}`, 4: `{"t":`, 5: `{"t":"t","a":"$1+1"}`, 6: `{"t":"t","w":[{"o":"=","c":"a","v":["1"]}]}`,
			7: `{"t":"t"}`}[id], nil
	}}
	for _, b := range [][]byte{{1}, {2, 4}, {3}, {4}, {0x80}, {5}, {6}, {7, 4}} {
		if q, err := r.decode(b, []release.Constant{str("1")}); err == nil {
			t.Errorf("decode(%x) accepted a malformed record: %+v", b, q)
		}
	}
}

// A state database written before the audit kept the structured record
// gains the column when it is opened; its rows read back without one.
func TestAuditGainsTheQueryColumn(t *testing.T) {
	ctx := context.Background()
	path := newStatePath(t)
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := queryEntry("x", "1")
	before.Query = nil
	db.Audit(before)
	db.Flush()
	if _, err := db.SQL().ExecContext(ctx, `ALTER TABLE audit_log DROP COLUMN query`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(ctx, path, Options{}); err != nil {
		t.Fatalf("reopening a state without the query column: %v", err)
	}
	defer db.Close()
	db.Audit(queryEntry("x", "2"))
	db.Flush()
	got, err := db.ListAudit(ctx, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Query != nil || got[1].Query == nil || got[1].Query.Where[1].Text != "age not between 2 and 40" {
		t.Errorf("audit after the migration: %+v", got)
	}
}

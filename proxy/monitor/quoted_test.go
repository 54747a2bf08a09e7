package monitor

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"countwall/config"
	"countwall/proxy"
	"countwall/proxy/risk"
	"countwall/proxy/state"
	"countwall/proxy/state/release"
)

// TestQuotedNamesFromWireToFindings: a table named `my where t` with a
// column named `a and b`, asked through the Engine under exact; the audit
// keeps the statement as the planner read it, and the solvers pin the
// one-person cell with its names quoted as PostgreSQL reads them. A reader
// that split the statement's text on " where " or " and " would take the
// table for `"my` and the column for `"a`.
func TestQuotedNamesFromWireToFindings(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath, statePath := filepath.Join(dir, "quoted.db"), filepath.Join(dir, "state.db")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE "my where t" (id INTEGER PRIMARY KEY, "a and b" TEXT NOT NULL, age INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 30; i++ {
		kind := []string{"x", "y", "z"}[i%3]
		if _, err := db.Exec(`INSERT INTO "my where t" VALUES (?, ?, ?)`, i, kind, 20+i); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	cfgPath := filepath.Join(dir, "countwall.yaml")
	body := fmt.Sprintf("database: %s\nstate: %s\naudit: {sync: normal}\nmechanism: {name: exact}\ntables: {\"my where t\": {privacy_unit: id}}\n", dbPath, statePath)
	if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := proxy.Open(ctx, cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession("mallory")
	// id 3 is the only row with "a and b" = 'x' and age 23.
	x := "x"
	for _, q := range []struct {
		sql  string
		args []*string
	}{
		{`SELECT COUNT(*) FROM "my where t" WHERE "a and b" = 'x' AND age = 23`, nil},
		{`SELECT COUNT(*) FROM "my where t" WHERE "a and b" = $1 AND age > 40`, []*string{&x}},
	} {
		if _, err := s.Exec(ctx, q.sql, q.args); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	e.Close()

	st, err := state.Open(ctx, statePath, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var rs []release.Release
	if err := st.EachAudit(ctx, state.AuditFilter{AnsweredOnly: true}, func(e state.AuditEntry) error {
		rs = append(rs, e.Release())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[1].Query == nil {
		t.Fatalf("audit holds %d answered rows, the second with query %+v", len(rs), rs)
	}
	q := rs[1].Query
	wantWhere := []string{`"a and b" = 'x'`, "age > 40"}
	var gotWhere []string
	for _, c := range q.Where {
		gotWhere = append(gotWhere, c.Text)
	}
	if q.Table != "my where t" || q.Where[0].Column != "a and b" || !slices.Equal(gotWhere, wantWhere) {
		t.Errorf("the audit read the bound statement as table %q, where %q (column %q); want %q, %q", q.Table, gotWhere, q.Where[0].Column, "my where t", wantWhere)
	}
	reports := risk.Assess(rs, risk.Options{})
	found := false
	for _, r := range reports {
		for _, f := range r.Findings {
			slices.Sort(f.Cell)
			if f.Table == "my where t" && f.Individual && f.Value == 1 && slices.Equal(f.Cell, []string{`"a and b" = 'x'`, "age = 23"}) {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no finding pins the one-person cell of \"my where t\"; reports: %+v", reports)
	}
}

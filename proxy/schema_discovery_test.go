package proxy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"countwall/proxy/catalog"
	"countwall/proxy/state"
)

// TestSchemaDiscoveryIsTheSameOnNeighbours: every catalog statement the
// clients sent gets the same answer over two databases that differ in one
// person with 50 rows, and none reads the protected data (the backend is
// never called) or charges a budget.
func TestSchemaDiscoveryIsTheSameOnNeighbours(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("catalog", "testdata", "captured.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var stmts []string
	for _, s := range strings.Split(string(b), "\n-- next\n") {
		if catalog.HandlesText(s) {
			stmts = append(stmts, s)
		}
	}
	dir := t.TempDir()
	bg := neighbourBackground()
	withPath, withoutPath := filepath.Join(dir, "with.db"), filepath.Join(dir, "without.db")
	writeNeighbourTable(t, withPath, append(slices.Clone(bg), target(50, int64(1))...))
	writeNeighbourTable(t, withoutPath, bg)
	var answers [2][]string
	for i, db := range []string{withPath, withoutPath} {
		e, rec := neighbourEngine(t, dir, fmt.Sprint("n", i), db, "laplace", nil, false)
		s := e.NewSession("alice")
		for _, sql := range stmts {
			var args []*string
			if strings.Contains(sql, "$1") {
				v := "20"
				switch {
				case strings.Contains(sql, "ANY($1)"):
					v = `{r,p,""}` // pgcli's relation kinds, bound as an array
				case strings.Contains(sql, "~) $1"):
					v = "^(people)$"
				}
				args = []*string{&v}
			}
			res, err := s.Exec(context.Background(), sql, args)
			answers[i] = append(answers[i], fmt.Sprint(res, err))
		}
		s.Close()
		if rec.last != nil {
			t.Errorf("database %d: a catalog statement read the protected data", i)
		}
		bals, err := e.budget.Balances(context.Background(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		for _, bal := range bals {
			if bal.EpsilonSpent != 0 {
				t.Errorf("database %d: catalog statements charged %+v", i, bal)
			}
		}
		audit, err := e.AuditLog(context.Background(), state.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(audit) != len(stmts) || audit[0].Kind != "catalog" || audit[0].Outcome != state.OutcomeAnswered {
			t.Errorf("database %d: audit holds %d entries (first %+v) for %d catalog statements", i, len(audit), audit[0], len(stmts))
		}
	}
	for j := range stmts {
		if answers[0][j] != answers[1][j] {
			t.Errorf("%.80s: answers differ between neighbours:\n%s\n%s", stmts[j], answers[0][j], answers[1][j])
		}
		if strings.Contains(answers[0][j], "error") || strings.Contains(answers[0][j], "not supported") {
			t.Errorf("%.80s: %s", stmts[j], answers[0][j])
		}
	}
}

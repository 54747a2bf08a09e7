package demo

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"countwall/attacks"
	"countwall/proxy/risk"
)

// TestAuditRiskFindsTheRowsRebuilt runs idp-reconstruct over the wire
// against the idp and the exact firewalls of the 3,000-row demo table, then
// `audit risk` on each firewall's state alone: every row the attack
// reported is a row finding over the same values and the same count, and
// each finding holds on the protected table.
func TestAuditRiskFindsTheRowsRebuilt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "people.db")
	if err := GeneratePeople(ctx, db, 3000, nil); err != nil {
		t.Fatal(err)
	}
	people, err := PeopleTables()
	if err != nil {
		t.Fatal(err)
	}
	const analyst = "idp-reconstruct"
	for _, setting := range []string{"idp", "exact"} {
		fw, err := StartFirewall(ctx, dir, db, people, Settings[setting], []string{analyst})
		if err != nil {
			t.Fatal(err)
		}
		row := fw.run(ctx, analyst, db, nil)
		fw.Stop()
		if row.Err != "" || row.Result == nil {
			t.Fatalf("%s: the attack failed: %s", setting, row.Err)
		}
		res := row.Result
		rebuilt, _ := res.Details["rows"].([]attacks.RecoveredRow)
		cols, _ := res.Details["columns"].([]string)
		if len(rebuilt) == 0 || res.Recovered == 0 {
			t.Fatalf("%s: the attack rebuilt no row: %+v", setting, res)
		}
		runs, err := assessStates(ctx, []riskPending{{label: setting, statePath: fw.StatePath, truthPath: db}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		run := runs[0]
		found := map[string]risk.Finding{}
		for _, rep := range run.Reports {
			for _, f := range rep.Findings {
				if rep.Analyst != analyst || f.Pattern != "row reconstruction" {
					continue
				}
				if f.Correct == nil || !*f.Correct {
					t.Errorf("%s: %s does not hold on the protected table", setting, f.What())
				}
				found[rowKey(f.Cell, cols)] = f
			}
		}
		people := 0.0
		for _, r := range rebuilt {
			f, ok := found[strings.Join(r.Values, "|")]
			if !ok || f.Value != float64(r.Count) || f.Individual != (r.Count == 1) {
				t.Errorf("%s: the attack's row %v x%d: audit risk found %+v (%v)", setting, r.Values, r.Count, f, ok)
			}
			people += f.Value
		}
		if people < float64(res.Recovered) {
			t.Errorf("%s: audit risk found %g people's rows, the attack %d", setting, people, res.Recovered)
		}
	}
}

// rowKey is a row finding's values, in the attack's column order, as the
// attack writes them (text unquoted).
func rowKey(cell, cols []string) string {
	vals := map[string]string{}
	for _, c := range cell {
		col, v, ok := strings.Cut(c, " = ")
		if !ok {
			return ""
		}
		if strings.HasPrefix(v, "'") {
			v = strings.ReplaceAll(strings.Trim(v, "'"), "''", "'")
		}
		vals[col] = v
	}
	out := make([]string, len(cols))
	for i, col := range cols {
		out[i] = vals[col]
	}
	return strings.Join(out, "|")
}

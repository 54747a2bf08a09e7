package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenBankServesAndReconstructs: gen bank writes the table and a whole
// config with every domain; the config answers a GROUP BY over the
// reserved column "default", and idp-reconstruct over all 17 attributes
// recovers every row of a small table exactly through it.
func TestGenBankServesAndReconstructs(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: gen bank, then idp-reconstruct over 17 attributes: skipped under -short; go test ./... runs it")
	}
	dir := t.TempDir()
	db, cfg := filepath.Join(dir, "bank.db"), filepath.Join(dir, "bank.yaml")
	out, err := run(t, "", "gen", "bank", "--rows", "60", "--out", db, "--config-out", cfg, "--mechanism", "idp")
	if err != nil || !strings.Contains(out, "wrote 60 rows of table bank") {
		t.Fatalf("gen bank: %v\n%s", err, out)
	}
	text, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`balance: {min: -10000, max: 110000}`, `default: ["no", "yes"]`, `pdays: {min: -1, max: 999}`} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the config lacks %s", want)
		}
	}
	// The attack asks for epsilon 1e-10 a query (docs/attacks.md, IDP).
	relaxed := strings.Replace(string(text), "min: 0.001", "min: 1.0e-12", 1)
	if err := os.WriteFile(cfg, []byte(relaxed), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, "", "query", "--config", cfg, "--mechanism.name", "exact", `SELECT "default", COUNT(*) FROM bank GROUP BY "default"`)
	if err != nil || !strings.Contains(out, "(2 rows)") {
		t.Fatalf("GROUP BY \"default\": %v\n%s", err, out)
	}
	args := []string{"attack", "idp-reconstruct", "--config", cfg, "--table", "bank", "--where", "", "--rows", "60", "--truth", db,
		"--domain", "y=no,yes", "--domain", "default=no,yes", "--domain", "housing=no,yes", "--domain", "loan=no,yes",
		"--domain", "contact=cellular,telephone,unknown", "--domain", "marital=divorced,married,single,unknown",
		"--domain", "education=primary,secondary,tertiary,unknown", "--domain", "poutcome=failure,other,success,unknown",
		"--domain", "job=admin.,blue-collar,entrepreneur,housemaid,management,retired,self-employed,services,student,technician,unemployed,unknown",
		"--domain", "month=jan,feb,mar,apr,may,jun,jul,aug,sep,oct,nov,dec",
		"--domain", "day=1..31", "--domain", "campaign=1..63", "--domain", "age=18..95", "--domain", "previous=0..275",
		"--domain", "pdays=-1..999", "--domain", "duration=0..5000", "--domain", "balance=-10000..110000"}
	out, err = run(t, "", args...)
	if err != nil || !strings.Contains(out, "60 of 60 rows recovered exactly") {
		t.Fatalf("idp-reconstruct: %v\n%s", err, out)
	}
}

// TestExampleBankConfig: examples/bank.yaml serves a generated bank table
// under idp, charging the per-query share of docs/attacks.md.
func TestExampleBankConfig(t *testing.T) {
	dir := t.TempDir()
	example, err := os.ReadFile("../../examples/bank.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "bank.yaml")
	if err := os.WriteFile(cfg, example, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "", "gen", "bank", "--rows", "40", "--out", filepath.Join(dir, "bank.db")); err != nil {
		t.Fatalf("gen bank: %v\n%s", err, out)
	}
	out, err := run(t, "", "query", "--config", cfg, "--analyst", "alice", `SELECT COUNT(*) > 100 FROM bank WHERE "default" = 'no'`)
	if err != nil || !strings.Contains(out, "charged epsilon 1e-10 (idp)") {
		t.Fatalf("query: %v\n%s", err, out)
	}
}

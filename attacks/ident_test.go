package attacks_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"countwall/attacks"
	"countwall/dataset"
)

func TestParseColumnName(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"age", "age", ""},
		{"Age", "age", ""},
		{"default", "default", ""},
		{`"Age"`, "Age", ""},
		{`"a""b"`, `a"b`, ""},
		{`""`, "", "not a well-formed"},
		{`"a"b"`, "", "not a well-formed"},
		{"a b", "", "plain name"},
		{"a;b", "", "plain name"},
		{"1x", "", "plain name"},
		{`"1x"`, "1x", ""},
		{"", "", "plain name"},
	}
	for _, tc := range tests {
		got, err := attacks.ParseColumnName(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseColumnName(%q) = %q, %v; want an error about %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseColumnName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	d, err := attacks.ParseDomain("default=yes,no")
	if err != nil || d.Column != "default" || strings.Join(d.Categories, ",") != "no,yes" {
		t.Errorf("ParseDomain(default=yes,no) = %+v, %v", d, err)
	}
}

// reservedWordDB is a 40-row table whose columns are named by reserved
// words: default and order.
func reservedWordDB(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "survey.csv")
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"id", "default", "order", "sex"}) //nolint:errcheck // checked by w.Error below
	for i := 0; i < 40; i++ {
		dflt, order, sex := "yes", strconv.Itoa(i%3), "M"
		if i%4 == 0 {
			dflt = "no"
		}
		if i%5 < 2 {
			sex = "F"
		}
		w.Write([]string{strconv.Itoa(i + 1), dflt, order, sex}) //nolint:errcheck // checked by w.Error below
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "survey.db")
	if _, err := dataset.LoadCSV(context.Background(), dataset.LoadOptions{CSVPath: csvPath, DBPath: db, Table: "survey", Unit: "id"}); err != nil {
		t.Fatal(err)
	}
	return db
}

// idp-reconstruct through the real Engine on columns named default and
// order (given as --domain flags would give them): the table is recovered
// exactly. A domain on a column the firewall does not have stops the run
// with 42703 after the columns before it, and the rows over those are kept.
func TestIDPReconstructReservedWordColumns(t *testing.T) {
	ctx := context.Background()
	db := reservedWordDB(t)
	body := fmt.Sprintf(`database: %s
state: %s
mechanism: {name: idp}
mechanisms:
  idp: {k: 1}
budget:
  epsilon: {default: 1.0e-10, min: 1.0e-12, max: 1}
  epsilon_cap: 1
tables:
  survey:
    privacy_unit: id
`, db, filepath.Join(t.TempDir(), "state.db"))
	e, _ := openEngine(t, body)
	var domains []attacks.Domain
	for _, flag := range []string{"default=no,yes", "order=0..2", "sex=F,M"} {
		d, err := attacks.ParseDomain(flag)
		if err != nil {
			t.Fatal(err)
		}
		domains = append(domains, d)
	}
	o := attacks.Options{Target: attacks.Target{Table: "survey"}, Threshold: attacks.ThresholdSetup{GroupK: -1}, Domains: domains}
	q := &attacks.Logged{Querier: attacks.InProcess{Session: e.NewSession("mallory")}}
	res, err := attacks.Execute(ctx, attacks.IDPReconstruct, q, o, db)
	if err != nil {
		t.Fatal(err)
	}
	if res.Recovered != 40 || !*res.Exact || res.Refused != 0 {
		t.Fatalf("recovered %d rows (exact %v), %d refused, note %q", res.Recovered, *res.Exact, res.Refused, res.Note)
	}

	missing, err := attacks.ParseDomain(`"Sex"=F,M`) // no such column: names keep their case in quotes
	if err != nil {
		t.Fatal(err)
	}
	o.Domains = []attacks.Domain{domains[0], missing}
	q = &attacks.Logged{Querier: attacks.InProcess{Session: e.NewSession("mallory")}}
	res, err = attacks.Execute(ctx, attacks.IDPReconstruct, q, o, "")
	if err != nil {
		t.Fatalf("an error mid-run lost the partial result: %v", err)
	}
	cols, rows := attacks.ReconstructedRows(res)
	if strings.Join(cols, ",") != "default" || len(rows) != 2 || !strings.Contains(res.Note, "42703") || !strings.Contains(res.Note, `"Sex"`) {
		t.Fatalf("columns %v, rows %+v, note %q", cols, rows, res.Note)
	}
}

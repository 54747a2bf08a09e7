package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countwall/attacks"
)

func ptr[T any](v T) *T { return &v }

func TestRecoveredAndCharged(t *testing.T) {
	for _, tc := range []struct {
		name      string
		r         *attacks.Result
		recovered string
		charged   string
	}{
		{"no result", nil, "-", "nothing"},
		{"cells", &attacks.Result{CellsTotal: 101, CellsExact: ptr(93), Spent: map[string]float64{"dp": 0}}, "93 of 101 exact (92.1%)", "nothing"},
		{"exact count", &attacks.Result{Recovered: 41, Truth: ptr(int64(41)), Exact: ptr(true)}, "41, exact", "nothing"},
		{"a withheld sum recovered", &attacks.Result{Recovered: 17400, Truth: ptr(int64(17400)), Exact: ptr(true), Details: map[string]any{"cell_withheld": true}}, "17400, exact (withheld)", "nothing"},
		{"a published sum missed", &attacks.Result{Recovered: 9, Truth: ptr(int64(17400)), Exact: ptr(false), Details: map[string]any{"cell_withheld": false}}, "9, truth 17400", "nothing"},
		{"wrong count", &attacks.Result{Recovered: 55, Truth: ptr(int64(41)), Exact: ptr(false), Spent: map[string]float64{"dp": 0.2}}, "55, truth 41", "dp 0.2"},
		{"no verdict", &attacks.Result{Recovered: -1, Undecided: true, Truth: ptr(int64(1)), Exact: ptr(false)}, "no verdict, truth 1", "nothing"},
		{"unscored", &attacks.Result{Recovered: 3, Spent: map[string]float64{"idp": 1.737e-7, "bdp": 2e-10}}, "3 (unscored)", "bdp 2e-10, idp 1.74e-07"},
		{"the run's own charge", &attacks.Result{Recovered: 3, Spent: map[string]float64{"dp": 1.2, "idp": 0}, Charged: map[string]float64{"dp": 0.19999999999999996, "idp": 0}}, "3 (unscored)", "dp 0.2"},
		{"a run charged nothing", &attacks.Result{Recovered: 3, Spent: map[string]float64{"dp": 1.2}, Charged: map[string]float64{"dp": 0}}, "3 (unscored)", "nothing"},
	} {
		if got := Recovered(tc.r); got != tc.recovered {
			t.Errorf("%s: Recovered = %q, want %q", tc.name, got, tc.recovered)
		}
		if got := Charged(tc.r); got != tc.charged {
			t.Errorf("%s: Charged = %q, want %q", tc.name, got, tc.charged)
		}
	}
}

// The line of a single run's report: this run's charge, then the analyst's
// total beside it.
func TestChargedLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *attacks.Result
		want string
	}{
		{"no result", nil, "nothing"},
		{"a firewall without a budget", &attacks.Result{}, "nothing"},
		{"first run", &attacks.Result{Spent: map[string]float64{"dp": 0.2, "idp": 0}, Charged: map[string]float64{"dp": 0.2, "idp": 0}},
			"dp epsilon 0.2 (analyst's total dp epsilon 0.2)"},
		{"a later run", &attacks.Result{Spent: map[string]float64{"dp": 1.2, "idp": 4e-10}, Charged: map[string]float64{"dp": 0.19999999999999996, "idp": 0}},
			"dp epsilon 0.2 (analyst's total dp epsilon 1.2, idp epsilon 4e-10)"},
		{"charged nothing", &attacks.Result{Spent: map[string]float64{"dp": 1}, Charged: map[string]float64{"dp": 0}},
			"nothing (analyst's total dp epsilon 1)"},
		{"budget unread before", &attacks.Result{Spent: map[string]float64{"dp": 1}},
			"unknown (analyst's total dp epsilon 1)"},
	} {
		if got := ChargedLine(tc.r); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A card written by Write reads back whole, a single --json result reads as
// one row, and anything else is refused with the file named.
func TestWriteReadPrint(t *testing.T) {
	dir := t.TempDir()
	rows := []Row{
		{Attack: "differencing", Mechanism: "suppress", Result: &attacks.Result{Attack: "differencing", Recovered: 41, Queries: 2, Truth: ptr(int64(41)), Exact: ptr(true)}},
		{Attack: "averaging", Mechanism: "laplace", Result: &attacks.Result{Attack: "averaging", Recovered: 611, Queries: 11, Refused: 1, Note: "stopped after 10 answers"}},
		{Attack: "bdp-existence", Mechanism: "laplace", Err: "connection refused"},
	}
	card := filepath.Join(dir, "report.json")
	if err := Write(card, rows); err != nil {
		t.Fatal(err)
	}
	back, err := Read(card)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 3 || back[0].Result.Recovered != 41 || back[2].Err != "connection refused" {
		t.Fatalf("read back %+v", back)
	}
	var out bytes.Buffer
	if err := Print(&out, back); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"differencing   suppress   41, exact",
		"bdp-existence  laplace    failed",
		"averaging vs laplace: stopped after 10 answers",
		"bdp-existence vs laplace: connection refused",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("card lacks %q:\n%s", want, out.String())
		}
	}

	single := filepath.Join(dir, "one.json")
	b, _ := json.Marshal(attacks.Result{Attack: "idp-membership", Mechanism: "idp", Recovered: 1})
	if err := os.WriteFile(single, b, 0o600); err != nil {
		t.Fatal(err)
	}
	one, err := Read(single)
	if err != nil || len(one) != 1 || one[0].Attack != "idp-membership" || one[0].Mechanism != "idp" {
		t.Errorf("single result read as %+v, %v", one, err)
	}
	junk := filepath.Join(dir, "junk.json")
	if err := os.WriteFile(junk, []byte(`{"x": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(junk); err == nil || !strings.Contains(err.Error(), "junk.json") {
		t.Errorf("junk read without a clear error: %v", err)
	}
}

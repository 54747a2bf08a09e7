package demo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countwall/attacks"
	"countwall/proxy"
)

// The configs the demo writes load back as the settings say, also from a
// directory whose name YAML would misread unquoted.
func TestWriteConfigLoadsSettings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir: #1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	people, err := PeopleTables()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		setting             string
		params              map[string]string // parameter: value as fmt prints it
		def, lo, hi, epsCap float64
		reserve             int
		noSuburbDomain      bool
	}{
		{"cellkey", map[string]string{"ptable": "uniform", "d": "2", "suppress_at": "4"}, 0.1, 1e-12, 1, 1, 1, true},
		{"laplace", nil, 0.1, 0.01, 1, 1, 1, true},
		{"idp+1", map[string]string{"k": "1", "plus_one": "true"}, 1e-10, 1e-12, 1, 0.001, 1000, true},
	}
	for _, tt := range tests {
		s := Settings[tt.setting]
		db := filepath.Join(dir, "demo: people.db")
		cfg, err := writeConfig(filepath.Join(dir, tt.setting+".yaml"), configFile{
			Database: db, State: filepath.Join(dir, "state.db"),
			Mechanism: mechanismName{s.Mechanism}, Mechanisms: mechanismParams(s.Mechanism, s.Params),
			Budget: s.Budget, Analysts: map[string]map[string]string{"yes": {}}, Tables: people,
		})
		if err != nil {
			t.Fatalf("%s: %v", tt.setting, err)
		}
		if cfg.Database != db || cfg.Mechanism.Name != s.Mechanism {
			t.Errorf("%s: database %q, mechanism %q", tt.setting, cfg.Database, cfg.Mechanism.Name)
		}
		for k, want := range tt.params {
			if got := fmt.Sprint(cfg.Mechanism.Params[k]); got != want {
				t.Errorf("%s: parameter %s = %s, want %s (all: %v)", tt.setting, k, got, want, cfg.Mechanism.Params)
			}
		}
		b := cfg.Budget
		if b.Epsilon.Default != tt.def || b.Epsilon.Min != tt.lo || b.Epsilon.Max != tt.hi {
			t.Errorf("%s: epsilon range %+v, want default %g in [%g, %g]", tt.setting, b.Epsilon, tt.def, tt.lo, tt.hi)
		}
		if tt.setting != "cellkey" && (b.EpsilonCap != tt.epsCap || b.Reserve != tt.reserve) {
			t.Errorf("%s: cap %g reserve %d, want %g and %d", tt.setting, b.EpsilonCap, b.Reserve, tt.epsCap, tt.reserve)
		}
		if _, ok := cfg.Analysts["yes"]; !ok {
			t.Errorf("%s: analyst \"yes\" read as %v", tt.setting, cfg.Analysts)
		}
		people := cfg.Tables["people"]
		if people.PrivacyUnit != "id" || people.Domains["age"] == nil || (people.Domains["suburb"] == nil) != tt.noSuburbDomain {
			t.Errorf("%s: people table loads as %+v", tt.setting, people)
		}
	}
}

func TestRenderAnswers(t *testing.T) {
	tests := []struct {
		name string
		res  proxy.Result
		want string
	}{
		{"one count", proxy.Result{Columns: []proxy.Column{{Name: "count", Type: proxy.ColumnInt8}}, Rows: [][]proxy.Value{{{Int: 1320}}}}, "1320"},
		{"suppressed", proxy.Result{Columns: []proxy.Column{{Name: "count", Type: proxy.ColumnInt8}}, Rows: [][]proxy.Value{{{Null: true}}}, Suppressed: []bool{true}}, "*"},
		{"float to one decimal", proxy.Result{Columns: []proxy.Column{{Name: "count", Type: proxy.ColumnFloat8}}, Rows: [][]proxy.Value{{{Float: 19989.24}}}}, "19989.2"},
		{"group by", proxy.Result{
			Columns: []proxy.Column{{Name: "sex", Type: proxy.ColumnText}, {Name: "count", Type: proxy.ColumnInt8}},
			Rows:    [][]proxy.Value{{{Text: "F"}, {Int: 9865}}, {{Text: "M"}, {Int: 10135}}},
		}, "9865/10135"},
	}
	for _, tt := range tests {
		if got := renderAnswers(&tt.res); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Without the attack suite the demo generates its table and prints every
// mechanism's answers: exact gives the true counts of the seeded table.
func TestRunComparesMechanisms(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := Run(context.Background(), &out, Options{Dir: dir, Rows: 500}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	lines := strings.Split(out.String(), "\n")
	var header, q1 []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == "exact" {
			header = f
		}
		if len(f) > 0 && f[0] == "Q1" && len(f) == len(mechanisms)+1 {
			q1 = f[1:]
		}
	}
	if len(header) != len(mechanisms) {
		t.Fatalf("header %v, want one column per mechanism:\n%s", header, out.String())
	}
	if len(q1) == 0 || q1[0] != "500" {
		t.Errorf("Q1 under exact: %v, want 500:\n%s", q1, out.String())
	}
	for _, m := range mechanisms {
		if _, err := os.Stat(filepath.Join(dir, "countwall-"+m.name+".yaml")); err != nil {
			t.Errorf("no config left for %s: %v", m.name, err)
		}
	}
	if strings.Contains(out.String(), "Report card") {
		t.Error("the attack suite ran without Attacks")
	}
}

// A demo firewall holds its table in memory before its first analyst, as
// serve does (no statement's deadline covers the read), admits its analysts
// with their generated passwords and starts from a fresh state database
// each time.
func TestFirewallDial(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "people.db")
	if err := GeneratePeople(ctx, db, 200, nil); err != nil {
		t.Fatal(err)
	}
	people, err := PeopleTables()
	if err != nil {
		t.Fatal(err)
	}
	// The first run spends 0.1 of eve's dp budget; the second starts over.
	for run, wantSpent := range []string{"0.1", "0"} {
		fw, err := StartFirewall(ctx, dir, db, people, Settings["laplace"], []string{"eve"})
		if err != nil {
			t.Fatal(err)
		}
		if got := fw.Engine.SnapshotStates(); got["people"] != "memory" {
			t.Errorf("run %d: before any statement the snapshot states are %v, want people in memory", run, got)
		}
		if _, err := fw.Dial(ctx, "mallory"); err == nil {
			t.Error("an analyst the firewall does not know got in")
		}
		w, err := fw.Dial(ctx, "eve")
		if err != nil {
			fw.Stop()
			t.Fatal(err)
		}
		var rows *attacks.Rows
		if run == 0 {
			_, err = w.Query(ctx, "SELECT COUNT(*) FROM people")
		}
		if err == nil {
			rows, err = w.Query(ctx, "SHOW budget")
		}
		w.Close()
		fw.Stop()
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if len(rows.Values) == 0 || rows.Values[0][0] != "dp" || rows.Values[0][1] != wantSpent {
			t.Errorf("run %d: SHOW budget = %v, want dp epsilon spent %s", run, rows.Values, wantSpent)
		}
	}
}

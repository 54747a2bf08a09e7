package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"countwall/attacks"
	"countwall/dataset"
)

func TestOpenNeedsOneFirewall(t *testing.T) {
	tests := []struct{ dsn, config, want string }{
		{"", "", "give --dsn (a running firewall) or --config (in process)"},
		{"postgres://x@127.0.0.1:1/countwall", "c.yaml", "give --dsn or --config, not both"},
	}
	for _, tt := range tests {
		if _, _, err := Open(context.Background(), tt.dsn, tt.config, nil, "a"); err == nil || err.Error() != tt.want {
			t.Errorf("Open(%q, %q) = %v, want %q", tt.dsn, tt.config, err, tt.want)
		}
	}
}

func TestPrint(t *testing.T) {
	truth, exact := int64(41), true
	cells := 2
	r := &attacks.Result{Attack: "differencing", Target: "SELECT COUNT(*) FROM people WHERE age > 60", Estimate: 41, Recovered: 41,
		Queries: 2, Charged: map[string]float64{"dp": 0.2}, Spent: map[string]float64{"dp": 0.5}, Seconds: 0.01, Truth: &truth, Exact: &exact, Note: "a note",
		Histogram: []attacks.Bin{{Value: "17", Answer: 3, Estimate: 4, Truth: &truth}, {Value: "18", Answer: 0, Estimate: -1, Truth: &truth}}, CellsTotal: 4, CellsExact: &cells, Unit: "values recovered exactly"}
	var b bytes.Buffer
	Print(&b, r)
	want := "attack     differencing\n" +
		"result     2 of 4 values recovered exactly (50.0%)\n" +
		"target     SELECT COUNT(*) FROM people WHERE age > 60\n" +
		"estimate   41.00 (recovered 41)\n" +
		"queries    2 sent, 0 refused\n" +
		"charged    dp epsilon 0.2 (analyst's total dp epsilon 0.5)\n" +
		"time       0.01s\n" +
		"total      41, the truth is 41\n" +
		"note       a note\n" +
		"\nvalue          answer  recovered      truth\n" +
		"17                  3          4         41  wrong\n" +
		"18                  0       none         41  wrong\n" +
		"\n2 of 4 values recovered exactly (50.0%)\n"
	if b.String() != want {
		t.Errorf("Print:\n%s\nwant:\n%s", b.String(), want)
	}
}

// The first line after the attack's name is its scored figure: the bits,
// combinations or rows recovered of all of them, not the target's total;
// a run without a verdict says so in words and prints no number for it.
func TestPrintHeadlineFirst(t *testing.T) {
	n := func(v int) *int { return &v }
	i64 := func(v int64) *int64 { return &v }
	yes, no := true, false
	tests := []struct {
		name string
		r    attacks.Result
		want string // the second line
		bans string // what must not be printed
	}{
		{"linear-reconstruction", attacks.Result{Recovered: 55, Truth: i64(57), Exact: &no, CellsTotal: 147, CellsExact: n(146), Unit: "bits recovered exactly"},
			"result     146 of 147 bits recovered exactly (99.3%)", "not recovered"},
		{"bdp-existence", attacks.Result{Recovered: 473, Truth: i64(473), Exact: &yes, CellsTotal: 1728, CellsExact: n(1728), Unit: "combinations classified right"},
			"result     1,728 of 1,728 combinations classified right (100.0%)", "truth      473"},
		{"idp-membership", attacks.Result{Undecided: true, Truth: i64(1), Exact: &no},
			"result     no verdict (the truth is 1)", "estimate"},
		{"idp-attribute", attacks.Result{Recovered: 3, Truth: i64(3), Exact: &yes, Details: map[string]any{"value": "doctorate"}},
			"result     recovered doctorate exactly", "-1"},
		{"differencing", attacks.Result{Recovered: 53, Truth: i64(41), Exact: &no},
			"result     recovered 53, the truth is 41", "unscored"},
		{"averaging", attacks.Result{Recovered: 612},
			"result     recovered 612 (not scored)", "the truth is"},
		{"idp-membership", attacks.Result{Recovered: 1, Truth: i64(1), Exact: &yes, Details: map[string]any{"verdict": "in the table"}},
			"result     recovered in the table (1) exactly", "estimate   -"},
	}
	for _, tt := range tests {
		tt.r.Attack = tt.name
		var b bytes.Buffer
		Print(&b, &tt.r)
		lines := strings.Split(b.String(), "\n")
		if len(lines) < 2 || lines[1] != tt.want {
			t.Errorf("%s: second line %q, want %q", tt.name, lines[1], tt.want)
		}
		if strings.Contains(b.String(), tt.bans) {
			t.Errorf("%s: printed %q:\n%s", tt.name, tt.bans, b.String())
		}
	}
}

// An attack run in process through a config logs its statements, writes its
// result as JSON and scores it; --emit prints the same script instead.
func TestRunInProcess(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "people.db")
	if err := dataset.GeneratePeople(ctx, db, dataset.PeopleOptions{Rows: 500, Seed: 1}, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "countwall.yaml")
	body := "database: " + db + "\nstate: " + filepath.Join(dir, "state.db") + "\nmechanism:\n  name: suppress\nmechanisms:\n  suppress: {threshold: 10}\n" +
		dataset.PeopleTable().ConfigSnippet()
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	a, ok := attacks.Lookup("differencing")
	if !ok {
		t.Fatal("differencing is not registered")
	}
	o, ro := Defaults(a), Options{}
	flags := pflag.NewFlagSet("differencing", pflag.ContinueOnError)
	AddFlags(flags, a, &o, &ro)
	sqlLog, jsonOut := filepath.Join(dir, "sent.sql"), filepath.Join(dir, "result.json")
	if err := flags.Parse([]string{"--config", cfg, "--truth", db, "--sql-log", sqlLog, "--json", jsonOut, "--where", "age > 90"}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(ctx, &out, a, o, ro); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), " exactly\n") {
		t.Errorf("differencing against suppress did not recover the count:\n%s", out.String())
	}
	var res attacks.Result
	if b, err := os.ReadFile(jsonOut); err != nil || json.Unmarshal(b, &res) != nil || res.Attack != "differencing" || res.Exact == nil || !*res.Exact {
		t.Errorf("result JSON: %v, %+v", err, res)
	}
	logged, err := os.ReadFile(sqlLog)
	if err != nil {
		t.Fatal(err)
	}

	ro.Emit = true
	var script bytes.Buffer
	if err := Run(ctx, &script, a, o, ro); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range strings.Split(strings.TrimSpace(script.String()), "\n") {
		if !strings.Contains(string(logged), strings.TrimSuffix(stmt, ";")) {
			t.Errorf("the emitted %q was not what the run sent:\n%s", stmt, logged)
		}
	}
	if res.Queries != strings.Count(script.String(), "\n") {
		t.Errorf("the run sent %d queries, the script has %d", res.Queries, strings.Count(script.String(), "\n"))
	}
}

// An adaptive attack has no script: --emit says so instead of running it.
func TestEmitRefusesAdaptiveAttacks(t *testing.T) {
	for _, a := range attacks.All() {
		if a.Script != nil {
			continue
		}
		err := Run(context.Background(), &bytes.Buffer{}, a, Defaults(a), Options{Emit: true})
		if err == nil || !strings.Contains(err.Error(), a.Name+" is adaptive") {
			t.Errorf("%s --emit: %v", a.Name, err)
		}
	}
}

// idp-reconstruct --parallel 3 in process runs over three sessions of the
// one Engine the config opened: the same rows and queries as --parallel 1,
// every query in the one SQL log, the connections in the result.
func TestRunParallelInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("scale: the reconstruction run over one and three sessions: skipped under -short; go test ./... runs it")
	}
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "people.db")
	if err := dataset.GeneratePeople(ctx, db, dataset.PeopleOptions{Rows: 300, Seed: 1}, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "countwall.yaml")
	body := "database: " + db + "\nstate: " + filepath.Join(dir, "state.db") + "\nmechanism:\n  name: idp\n" +
		"budget:\n  epsilon: {default: 1.0e-10, min: 1.0e-12, max: 1}\n" + dataset.PeopleTable().ConfigSnippet()
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	a, ok := attacks.Lookup("idp-reconstruct")
	if !ok {
		t.Fatal("idp-reconstruct is not registered")
	}
	results := map[string]attacks.Result{}
	for _, parallel := range []string{"1", "3"} {
		o, ro := Defaults(a), Options{}
		flags := pflag.NewFlagSet("idp-reconstruct", pflag.ContinueOnError)
		AddFlags(flags, a, &o, &ro)
		sqlLog, jsonOut := filepath.Join(dir, "sent"+parallel+".sql"), filepath.Join(dir, "result"+parallel+".json")
		if err := flags.Parse([]string{"--config", cfg, "--truth", db, "--sql-log", sqlLog, "--json", jsonOut, "--parallel", parallel,
			"--where", "age < 30", "--domain", "sex=F,M", "--domain", "age=0..29", "--domain", "secret=0..1", "--domain", "marital=divorced,married,never_married,separated,widowed"}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Run(ctx, &out, a, o, ro); err != nil {
			t.Fatalf("--parallel %s: %v\n%s", parallel, err, out.String())
		}
		var res attacks.Result
		if b, err := os.ReadFile(jsonOut); err != nil || json.Unmarshal(b, &res) != nil {
			t.Fatalf("--parallel %s: result JSON: %v", parallel, err)
		}
		if res.Exact == nil || !*res.Exact || res.Recovered < 10 || res.Note != "" {
			t.Fatalf("--parallel %s: recovered %d rows, exact %v, note %q", parallel, res.Recovered, res.Exact, res.Note)
		}
		logged, err := os.ReadFile(sqlLog)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(logged), "SELECT COUNT(*) >"); n != res.Queries {
			t.Errorf("--parallel %s: the log holds %d queries of %d", parallel, n, res.Queries)
		}
		results[parallel] = res
	}
	one, three := results["1"], results["3"]
	if three.Queries != one.Queries || three.Recovered != one.Recovered {
		t.Errorf("--parallel 3: %d queries, %d rows; --parallel 1: %d queries, %d rows", three.Queries, three.Recovered, one.Queries, one.Recovered)
	}
	if got := three.Details["connections"]; got != float64(3) {
		t.Errorf("--parallel 3 reports connections %v", got)
	}
}

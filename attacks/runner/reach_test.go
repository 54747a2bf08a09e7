package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/pflag"

	"countwall/attacks"
	"countwall/dataset"
)

// suppressConfig writes a config fronting a 500-person people table with
// suppress, and returns its path and the database's.
func suppressConfig(t *testing.T) (cfg, db string) {
	t.Helper()
	dir := t.TempDir()
	db = filepath.Join(dir, "people.db")
	if err := dataset.GeneratePeople(context.Background(), db, dataset.PeopleOptions{Rows: 500, Seed: 1}, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "countwall.yaml")
	body := "database: " + db + "\nstate: " + filepath.Join(dir, "state.db") + "\nmechanism:\n  name: suppress\n" + dataset.PeopleTable().ConfigSnippet()
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, db
}

// runDifferencing runs differencing in process through cfg with args.
func runDifferencing(t *testing.T, ctx context.Context, cfg string, args ...string) (*bytes.Buffer, string, error) {
	t.Helper()
	return runDifferencingWith(t, ctx, Options{}, cfg, args...)
}

func runDifferencingWith(t *testing.T, ctx context.Context, ro Options, cfg string, args ...string) (*bytes.Buffer, string, error) {
	t.Helper()
	a, _ := attacks.Lookup("differencing")
	o := Defaults(a)
	flags := pflag.NewFlagSet("differencing", pflag.ContinueOnError)
	AddFlags(flags, a, &o, &ro)
	jsonOut := filepath.Join(t.TempDir(), "result.json")
	if err := flags.Parse(append([]string{"--config", cfg, "--json", jsonOut}, args...)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	return &out, jsonOut, Run(ctx, &out, a, o, ro)
}

// A run records how it reached the firewall: in process, through which
// config (absolute), against which table.
func TestRunRecordsItsReach(t *testing.T) {
	cfg, _ := suppressConfig(t)
	_, jsonOut, err := runDifferencing(t, context.Background(), cfg, "--where", "age > 90")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readResults(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	if r := rows.Reach; r == nil || r.Transport != attacks.TransportInProcess || r.Config != cfg || r.Table != "people" || r.Server != "" {
		t.Errorf("reach %+v, want in process through %s, table people", r, cfg)
	}
	w := attacks.WireReach("postgres://alice:secret@127.0.0.1:5433/countwall?sslmode=disable", "", "people")
	if w.Server != "127.0.0.1:5433/countwall" || strings.Contains(w.String(), "secret") || w.String() != "wire 127.0.0.1:5433/countwall, table people" {
		t.Errorf("wire reach %+v (%s)", w, w)
	}
}

// The refusal of the privacy unit in --where carries the firewall's hint on
// how the owner allows it, in process and from a wire error alike.
func TestRunSaysHowTheUnitIsAllowed(t *testing.T) {
	cfg, _ := suppressConfig(t)
	_, _, err := runDifferencing(t, context.Background(), cfg, "--where", "id <= 200")
	if err == nil || !strings.Contains(err.Error(), "HINT: The data owner can allow it with tables.people.policy.unit_in_where: true") {
		t.Errorf("error %v: want the hint naming tables.people.policy.unit_in_where", err)
	}
	wire := &pgconn.PgError{Severity: "ERROR", Code: "42501", Message: "no", Hint: "allow it with x"}
	if got := attacks.WithHint(errors.Join(errors.New("asking"), wire)).Error(); !strings.HasSuffix(got, "\nHINT: allow it with x") {
		t.Errorf("wire error with hint: %q", got)
	}
}

// A run interrupted once the firewall is open (here before its first
// query) prints and writes what it had, and says so in its error.
func TestRunInterruptedWritesItsResult(t *testing.T) {
	cfg, _ := suppressConfig(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ro := Options{Progress: func(func() int) (func(int, int), func(string), func()) {
		cancel() // the run's progress starts as its queries do
		return nil, nil, func() {}
	}}
	out, jsonOut, err := runDifferencingWith(t, ctx, ro, cfg, "--where", "age > 90")
	if err == nil || !strings.Contains(err.Error(), "interrupted: the result above is what the run had recovered, written to "+jsonOut) {
		t.Fatalf("error %v", err)
	}
	if !strings.HasPrefix(out.String(), "attack     differencing\nresult     ") {
		t.Errorf("printed %q", out.String())
	}
	if _, err := readResults(jsonOut); err != nil {
		t.Errorf("the result was not written: %v", err)
	}
}

func readResults(path string) (*attacks.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r attacks.Result
	return &r, json.Unmarshal(b, &r)
}

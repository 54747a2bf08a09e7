package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"countwall/ir"
)

const validYAML = `
database: protected.db
state: state.db
mechanism:
  name: cellkey
  params:
    ptable: uniform
    D: 3
budget:
  epsilon: {default: 0.1, min: 0.01, max: 0.5}
  epsilon_cap: 2
analysts:
  alice:
    password: "SCRAM-SHA-256$4096:c2FsdA==$c3RvcmVk:c2VydmVy"
    epsilon_cap: 0.5
  bob: {}
policy:
  max_in_list: 7
tables:
  people:
    privacy_unit: ID
    columns: [age, Sex]
    domains:
      age: {min: 0, max: 120}
      sex: [F, M]
    policy:
      strict: true
server:
  query_timeout: 3s
`

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "countwall.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadValid(t *testing.T) {
	path := writeConfig(t, validYAML)
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	dir := filepath.Dir(path)
	if cfg.Database != filepath.Join(dir, "protected.db") || cfg.State != filepath.Join(dir, "state.db") {
		t.Errorf("paths not resolved against the config's directory: %q %q", cfg.Database, cfg.State)
	}
	if cfg.Mechanism.Name != "cellkey" || cfg.Mechanism.Params["d"] != 3 {
		t.Errorf("mechanism = %+v", cfg.Mechanism)
	}
	if got := cfg.Budget.Epsilon; got != (Range{Default: 0.1, Min: 0.01, Max: 0.5}) {
		t.Errorf("epsilon range = %+v", got)
	}
	if cfg.Analysts["alice"].EpsilonCap != 0.5 || cfg.Analysts["bob"].EpsilonCap != 2 {
		t.Errorf("analyst caps = %+v", cfg.Analysts)
	}
	if cfg.Audit.Sync != "full" {
		t.Errorf("audit.sync = %q, want the default full", cfg.Audit.Sync)
	}
	if cfg.Server.QueryTimeout != 3*time.Second || cfg.Server.Listen != "127.0.0.1:5433" ||
		cfg.Server.AuthTimeout != 10*time.Second || cfg.Server.MaxPendingAuth != 32 {
		t.Errorf("server = %+v", cfg.Server)
	}
	people := cfg.Tables["people"]
	if people.PrivacyUnit != "id" || strings.Join(people.Columns, ",") != "age,sex" {
		t.Errorf("table = %+v", people)
	}
	if d := people.Domains["age"]; d == nil || !d.IsRange || d.Min != 0 || d.Max != 120 {
		t.Errorf("age domain = %+v", d)
	}
	if d := people.Domains["sex"]; d == nil || strings.Join(d.Categories, ",") != "F,M" {
		t.Errorf("sex domain = %+v", d)
	}
	if len(people.ValueBounds) != 0 {
		t.Errorf("value bounds = %+v, want none declared", people.ValueBounds)
	}
	p := people.Policy
	if !p.Strict || p.AllowOr || p.AllowNotEqual || p.MaxInList != 7 || p.MaxGroups != ir.DefaultPolicy().MaxGroups {
		t.Errorf("policy = %+v", p)
	}
}

func TestLoadValueBounds(t *testing.T) {
	body := strings.Replace(validYAML, "privacy_unit: ID", "privacy_unit: ID\n    bounds: {Income: {min: -10, max: 500000.5}, age: {min: 0, max: 120}}", 1)
	cfg, err := Load(writeConfig(t, body), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Tables["people"].ValueBounds
	want := map[string]ir.ValueBounds{"income": {Min: -10, Max: 500000.5}, "age": {Min: 0, Max: 120}}
	if len(got) != len(want) || got["income"] != want["income"] || got["age"] != want["age"] {
		t.Fatalf("value bounds = %+v, want %+v", got, want)
	}
}

func TestLoadErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name    string
		replace [2]string
		wantKey string
	}{
		{"missing database", [2]string{"database: protected.db", ""}, "database: is required"},
		{"missing unit", [2]string{"privacy_unit: ID", ""}, "tables.people.privacy_unit"},
		{"range reversed", [2]string{"{min: 0, max: 120}", "{min: 9, max: 1}"}, "tables.people.domains.age: min 9 is greater than max 1"},
		{"range not integers", [2]string{"{min: 0, max: 120}", "{min: a, max: 1}"}, "tables.people.domains.age"},
		{"range too wide", [2]string{"{min: 0, max: 120}", "{min: 0, max: 10000000}"}, "tables.people.domains.age: range from 0 to 10000000 is too large"},
		{"range of every int64", [2]string{"{min: 0, max: 120}", "{min: -9223372036854775808, max: 9223372036854775807}"}, "tables.people.domains.age: range from -9223372036854775808 to 9223372036854775807 is too large"},
		{"duplicate category", [2]string{"[F, M]", "[F, F]"}, `category "F" is listed twice`},
		{"unknown policy key", [2]string{"strict: true", "strictt: true"}, "tables.people.policy.strictt: unknown policy key"},
		{"zero limit", [2]string{"max_in_list: 7", "max_in_list: 0"}, "policy.max_in_list: must be at least 1"},
		{"epsilon default out of range", [2]string{"default: 0.1", "default: 0.9"}, "budget.epsilon.default: 0.9 is outside"},
		{"plain password", [2]string{`"SCRAM-SHA-256$4096:c2FsdA==$c3RvcmVk:c2VydmVy"`, "hunter2"}, "analysts.alice.password"},
		{"bad timeout", [2]string{"query_timeout: 3s", "query_timeout: 0s"}, "server.query_timeout"},
		{"timeout under a millisecond", [2]string{"query_timeout: 3s", "query_timeout: 500us"}, "server.query_timeout: must be a duration of at least 1ms"},
		{"bad auth timeout", [2]string{"query_timeout: 3s", "query_timeout: 3s\n  auth_timeout: -1s"}, "server.auth_timeout: must be a positive duration"},
		{"no pending logins", [2]string{"query_timeout: 3s", "query_timeout: 3s\n  max_pending_auth: 0"}, "server.max_pending_auth: must be at least 1"},
		{"zero groups per unit", [2]string{"privacy_unit: ID", "privacy_unit: ID\n    max_groups_per_unit: 0"}, "tables.people.max_groups_per_unit: must be a whole number >= 1"},
		{"fractional rows per unit", [2]string{"privacy_unit: ID", "privacy_unit: ID\n    max_rows_per_unit: 1.5"}, "tables.people.max_rows_per_unit"},
		{"negative cap", [2]string{"epsilon_cap: 0.5", "epsilon_cap: -1"}, "analysts.alice"},
		{"unknown top-level key", [2]string{"state: state.db", "state: state.db\ndatabse: x.db"}, "databse: unknown key (known: analysts, audit, budget, database, "},
		{"unknown server key", [2]string{"query_timeout: 3s", "query_timout: 3s"}, "server.query_timout: unknown key (known: auth_timeout, idle_timeout, listen, "},
		{"unknown analyst key", [2]string{"epsilon_cap: 0.5", "epsilon_capp: 0.5"}, "analysts.alice.epsilon_capp: unknown key (known: delta_cap, epsilon_cap, password)"},
		{"unknown table key", [2]string{"privacy_unit: ID", "privacy_unit: ID\n    colums: [age]"}, "tables.people.colums: unknown key (known: bounds, columns, domains, "},
		{"bounds reversed", [2]string{"privacy_unit: ID", "privacy_unit: ID\n    bounds: {income: {min: 9, max: 1}}"}, "tables.people.bounds.income: min 9 is greater than max 1"},
		{"bounds not numbers", [2]string{"privacy_unit: ID", "privacy_unit: ID\n    bounds: {income: {min: a, max: 1}}"}, "tables.people.bounds.income: bounds need numeric min and max"},
		{"bounds not a map", [2]string{"privacy_unit: ID", "privacy_unit: ID\n    bounds: {income: [0, 1]}"}, "tables.people.bounds.income: bounds are a map"},
		{"bounds unknown key", [2]string{"privacy_unit: ID", "privacy_unit: ID\n    bounds: {income: {min: 0, max: 1, step: 2}}"}, `tables.people.bounds.income: unknown key "step"`},
		{"bounds too large", [2]string{"privacy_unit: ID", "privacy_unit: ID\n    bounds: {income: {min: 0, max: 1e300}}"}, "tables.people.bounds.income: min and max must be finite"},
		{"unknown budget range key", [2]string{"max: 0.5}", "max: 0.5, maximum: 1}"}, "budget.epsilon.maximum: unknown key (known: default, max, min)"},
		{"duration not a duration", [2]string{"query_timeout: 3s", "query_timeout: soon"}, `server.query_timeout: must be a duration such as 10s, got "soon"`},
		{"cap not a number", [2]string{"epsilon_cap: 2", "epsilon_cap: lots"}, `budget.epsilon_cap: must be a finite number, got "lots"`},
		{"audit sync unknown", [2]string{"state: state.db", "state: state.db\naudit: {sync: off}"}, `audit.sync: must be full (on disk before an answer leaves) or normal`},
		{"unknown audit key", [2]string{"state: state.db", "state: state.db\naudit: {synch: normal}"}, "audit.synch: unknown key (known: retain, sync)"},
		{"audit retain negative", [2]string{"state: state.db", "state: state.db\naudit: {retain: -1h}"}, "audit.retain: must be a duration"},
		{"monitor too often", [2]string{"state: state.db", "state: state.db\nmonitor: {every: 10ms}"}, "monitor.every: must be 0 (off) or a duration of at least 1s"},
		{"monitor suspend without a check", [2]string{"state: state.db", "state: state.db\nmonitor: {suspend: true}"}, "monitor.suspend: needs monitor.every"},
		{"monitor reading no history", [2]string{"state: state.db", "state: state.db\nmonitor: {every: 1m, max_history: 0}"}, "monitor.max_history: must be at least 1"},
		{"policy value of the wrong type", [2]string{"max_in_list: 7", "max_in_list: [7]"}, "policy.max_in_list: must be an integer, got a list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Replace(validYAML, tc.replace[0], tc.replace[1], 1)
			if body == validYAML {
				t.Fatalf("replacement %q not found in the base config", tc.replace[0])
			}
			_, err := Load(writeConfig(t, body), nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantKey) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantKey)
			}
		})
	}
}

func TestEnvironmentAndFlagsOverride(t *testing.T) {
	path := writeConfig(t, validYAML)
	t.Setenv("COUNTWALL_MECHANISM_NAME", "exact")
	// Values from the environment are strings: they decode into the
	// numbers, booleans and durations the keys hold.
	t.Setenv("COUNTWALL_SERVER_MAX_CONNECTIONS", "5")
	t.Setenv("COUNTWALL_SERVER_IDLE_TIMEOUT", "90s")
	t.Setenv("COUNTWALL_BUDGET_EPSILON_CAP", "1.5")
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mechanism.Name != "exact" {
		t.Errorf("env override: mechanism = %q, want exact", cfg.Mechanism.Name)
	}
	if cfg.Server.MaxConnections != 5 || cfg.Server.IdleTimeout != 90*time.Second || cfg.Budget.EpsilonCap != 1.5 {
		t.Errorf("env override: server %+v, epsilon cap %g; want 5 connections, 90s idle, cap 1.5", cfg.Server, cfg.Budget.EpsilonCap)
	}
	flags := pflag.NewFlagSet("test", pflag.ContinueOnError)
	flags.String("mechanism.name", "", "")
	flags.String("unrelated", "", "")
	if err := flags.Parse([]string{"--mechanism.name", "suppress"}); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(path, flags)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mechanism.Name != "suppress" {
		t.Errorf("flag override: mechanism = %q, want suppress", cfg.Mechanism.Name)
	}
}

func TestMechanismParametersFollowTheSelectedMechanism(t *testing.T) {
	body := strings.Replace(validYAML, `mechanism:
  name: cellkey
  params:
    ptable: uniform
    D: 3`, `mechanism:
  name: cellkey
  params:
    suppress_at: 9
mechanisms:
  cellkey: {ptable: uniform, D: 3, suppress_at: 4}
  suppress: {threshold: 7}`, 1)
	path := writeConfig(t, body)
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Mechanism.Params; p["d"] != 3 || p["suppress_at"] != 9 || p["ptable"] != "uniform" {
		t.Errorf("cellkey params = %v, want D 3 and suppress_at overridden to 9", p)
	}
	t.Setenv("COUNTWALL_MECHANISM_NAME", "suppress")
	cfg, err = Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Mechanism.Params; p["threshold"] != 7 || p["d"] != nil {
		t.Errorf("suppress params = %v, want only its own section plus mechanism.params", p)
	}
}

// TestSeedIsRefused: no key or variable a user can set makes the noise
// predictable; a config that still carries the old `seed` key is refused
// with a message that names it, from the file and from the environment.
func TestSeedIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, body, env string
	}{
		{"file", validYAML + "seed: 7\n", ""},
		{"file zero", validYAML + "seed: 0\n", ""},
		{"environment", validYAML, "7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("COUNTWALL_SEED", tc.env)
			}
			_, err := Load(writeConfig(t, tc.body), nil)
			if err == nil || !strings.Contains(err.Error(), "seed: ") || !strings.Contains(err.Error(), "predictable") {
				t.Fatalf("Load with a seed: err = %v, want a refusal naming seed", err)
			}
		})
	}
}

// TestTableBounds: max_rows_per_unit and max_groups_per_unit are read per
// table; a table that names none keeps zero (ir.DefaultBounds applies).
func TestTableBounds(t *testing.T) {
	cfg, err := Load(writeConfig(t, validYAML), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Tables["people"].Bounds; got != (ir.Bounds{}) {
		t.Errorf("no bounds named: got %+v", got)
	}
	body := strings.Replace(validYAML, "privacy_unit: ID", "privacy_unit: ID\n    max_rows_per_unit: 3\n    max_groups_per_unit: 12", 1)
	cfg, err = Load(writeConfig(t, body), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Tables["people"].Bounds, (ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 12}); got != want {
		t.Errorf("bounds = %+v, want %+v", got, want)
	}
}

// TestServerURLsAreNotPaths: a postgres:// database or state is kept as
// written, not resolved against the config's directory.
func TestServerURLsAreNotPaths(t *testing.T) {
	const store = "postgres://countwall@db.example:5432/census?sslmode=require"
	const state = "postgresql://firewall@db.example/countwall_state"
	body := strings.Replace(strings.Replace(validYAML, "database: protected.db", "database: "+store, 1), "state: state.db", "state: "+state, 1)
	cfg, err := Load(writeConfig(t, body), nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.Database != store || cfg.State != state {
		t.Errorf("database %q, state %q; want the URLs unchanged", cfg.Database, cfg.State)
	}
}

// TestAnalyst: a command acts for an analyst the config names, or for its
// only analyst when none is given; any other name is refused with the list.
func TestAnalyst(t *testing.T) {
	two := &Config{Analysts: map[string]Analyst{"alice": {}, "bob": {}}}
	one := &Config{Analysts: map[string]Analyst{"alice": {}}}
	none := &Config{}
	tests := []struct {
		name    string
		cfg     *Config
		analyst string
		want    string
		err     string
	}{
		{"named", two, "bob", "bob", ""},
		{"the only one", one, "", "alice", ""},
		{"unknown", two, "mallory", "", `analyst "mallory" is not in the config; its analysts: alice, bob`},
		{"unknown beside the only one", one, "mallory", "", `analyst "mallory" is not in the config; its analysts: alice`},
		{"several, none named", two, "", "", "the config names 2 analysts (alice, bob): say which with --analyst"},
		{"no analysts", none, "alice", "", "the config names no analysts: add one under analysts:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cfg.Analyst(tt.analyst)
			if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
				t.Errorf("Analyst(%q) = %q, %v; want %q, %q", tt.analyst, got, err, tt.want, tt.err)
			}
		})
	}
}

// Package config loads countwall's configuration from a YAML file, COUNTWALL_*
// environment variables and command-line flags (in rising precedence) and
// validates it. A validation error names the key and says what is wrong.
package config

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"countwall/config/keys"
	"countwall/ir"
)

// Config is a validated configuration.
type Config struct {
	// Path is the file the config was read from ("" when none); relative
	// database paths are resolved against its directory.
	Path string

	Database  string // the protected database, opened read-only: a SQLite file or a postgres:// URL
	State     string // the state database: secret, audit log, budget ledger
	Audit     Audit
	Monitor   Monitor
	Mechanism Mechanism
	Budget    Budget
	Analysts  map[string]Analyst
	Server    Server
	Tables    map[string]Table
	// MechanismSections are the mechanisms.NAME sections as written, so that
	// a tool may deploy another mechanism with its configured parameters
	// (countwall audit --config).
	MechanismSections map[string]map[string]any
}

// Mechanism selects the disclosure-control mechanism by name.
type Mechanism struct {
	Name   string
	Params map[string]any
}

// Audit configures the audit log.
type Audit struct {
	// Sync is how far an answer's audit row has gone when the answer
	// leaves: "full" (on disk; survives a power loss) or "normal" (in the
	// state database's log; survives a crash of countwall, not of the
	// machine). Budget charges are always written as "full".
	Sync string `mapstructure:"sync"`
	// Retain is how long audit rows are kept: serve deletes older ones at
	// start and every hour. 0 keeps them for ever. Retention never touches
	// the budget ledger.
	Retain time.Duration `mapstructure:"retain"`
}

// DefaultMonitorHistory is monitor.max_history when the config does not
// set it.
const DefaultMonitorHistory = 100000

// Monitor configures serve's background risk check (countwall audit
// risk on each analyst's released answers).
type Monitor struct {
	// Every is how often the check runs; 0 turns the monitor off.
	Every time.Duration `mapstructure:"every"`
	// Suspend refuses every later statement of an analyst whose released
	// answers already determine an individual, until serve restarts.
	Suspend bool `mapstructure:"suspend"`
	// MaxHistory is how many of an analyst's latest answered statements a
	// check reads: the solvers hold what they read in memory (about 2 KB a
	// statement, more for long threshold searches), and the check runs
	// inside serve.
	MaxHistory int `mapstructure:"max_history"`
}

// Range is a default per-query value and the range an analyst may SET.
type Range struct {
	Default float64 `mapstructure:"default"`
	Min     float64 `mapstructure:"min"`
	Max     float64 `mapstructure:"max"`
}

// Budget is the per-query budget share an analyst may choose with SET, and
// the per-analyst caps that apply when the analysts section names none.
type Budget struct {
	Epsilon Range `mapstructure:"epsilon"`
	Delta   Range `mapstructure:"delta"`
	// EpsilonCap and DeltaCap are each analyst's total; an analyst entry may override.
	EpsilonCap float64 `mapstructure:"epsilon_cap"`
	DeltaCap   float64 `mapstructure:"delta_cap"`
	// Reserve is how many queries' worth of budget the ledger may reserve in one
	// durable write (1 = charge every query separately).
	Reserve int `mapstructure:"reserve"`
}

// Analyst is one analyst allowed to connect.
type Analyst struct {
	// Password is a SCRAM-SHA-256 verifier as `countwall passwd` prints it.
	Password   string  `mapstructure:"password"`
	EpsilonCap float64 `mapstructure:"epsilon_cap"`
	DeltaCap   float64 `mapstructure:"delta_cap"`
}

// Server configures the PostgreSQL wire front door.
type Server struct {
	Listen         string        `mapstructure:"listen"`
	TLSCert        string        `mapstructure:"tls_cert"`
	TLSKey         string        `mapstructure:"tls_key"`
	Trust          bool          `mapstructure:"trust"` // no passwords; only on a loopback address
	MaxConnections int           `mapstructure:"max_connections"`
	IdleTimeout    time.Duration `mapstructure:"idle_timeout"`
	QueryTimeout   time.Duration `mapstructure:"query_timeout"`
	// AuthTimeout bounds the time from accept to the end of authentication.
	AuthTimeout time.Duration `mapstructure:"auth_timeout"`
	// MaxPendingAuth bounds connections still in startup or authentication,
	// apart from MaxConnections, so that they cannot lock analysts out.
	MaxPendingAuth int `mapstructure:"max_pending_auth"`
	// MetricsListen, when set, is the address serve exposes Prometheus
	// metrics on (HTTP, /metrics); empty means no metrics.
	MetricsListen string `mapstructure:"metrics_listen"`
	// SocketDir, when set, is a directory where serve also listens on a
	// Unix socket, named as PostgreSQL names its own (.s.PGSQL.PORT, PORT
	// being listen's), for clients on the same machine.
	SocketDir string `mapstructure:"socket_dir"`
}

// Table is a protected table's configuration.
type Table struct {
	PrivacyUnit string
	// Columns lists the queryable columns; empty means every column.
	Columns []string
	Domains map[string]*ir.Domain
	// ValueBounds are the numeric columns' public bounds
	// (tables.NAME.bounds.COL: {min, max}), by lower-case column name.
	ValueBounds map[string]ir.ValueBounds
	Policy      ir.Policy
	// Bounds are max_rows_per_unit and max_groups_per_unit: how much one
	// privacy unit may contribute to a query answered by laplace or gaussian.
	// Zero fields take ir.DefaultBounds (1 and 1).
	Bounds ir.Bounds
	// UnitKeyed declares that every row has its own privacy unit (a unit
	// never has two rows or none). It is checked when the firewall starts,
	// and lets the in-memory path answer bounded counts: which path answers
	// is decided by this declaration and the schema, never by the rows.
	UnitKeyed bool
}

// Load reads the configuration. path may be empty (then only environment
// variables and flags count); flags may be nil. Flags are bound by their
// names with dashes read as underscores and dots as section separators
// (for example --database, --state, --mechanism.name).
func Load(path string, flags *pflag.FlagSet) (*Config, error) {
	v := viper.New()
	setDefaults(v)
	v.SetEnvPrefix("COUNTWALL")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if path != "" {
		v.SetConfigFile(path)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("reading config %s: %w", path, err)
		}
	}
	if flags != nil {
		var bindErr error
		flags.VisitAll(func(f *pflag.Flag) {
			if !isConfigFlag(f.Name) {
				return
			}
			if err := v.BindPFlag(strings.ReplaceAll(f.Name, "-", "_"), f); err != nil && bindErr == nil {
				bindErr = err
			}
		})
		if bindErr != nil {
			return nil, fmt.Errorf("binding flags: %w", bindErr)
		}
	}
	cfg, err := decode(v)
	if err != nil {
		if path != "" {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg.Path = path
	cfg.resolvePaths()
	return cfg, nil
}

// configFlags are the flags that may override config keys.
var configFlags = map[string]bool{
	"database": true, "state": true, "mechanism.name": true,
	"server.listen": true,
}

func isConfigFlag(name string) bool { return configFlags[strings.ReplaceAll(name, "-", "_")] }

func setDefaults(v *viper.Viper) {
	v.SetDefault("state", "countwall-state.db")
	v.SetDefault("audit.sync", "full")
	v.SetDefault("monitor.max_history", DefaultMonitorHistory)
	v.SetDefault("mechanism.name", "exact")
	v.SetDefault("budget.epsilon.default", 0.1)
	v.SetDefault("budget.epsilon.min", 0.001)
	v.SetDefault("budget.epsilon.max", 1.0)
	v.SetDefault("budget.delta.default", 1e-6)
	v.SetDefault("budget.delta.min", 0.0)
	v.SetDefault("budget.delta.max", 1e-3)
	v.SetDefault("budget.epsilon_cap", 1.0)
	v.SetDefault("budget.delta_cap", 1e-5)
	v.SetDefault("budget.reserve", 1)
	v.SetDefault("server.listen", "127.0.0.1:5433")
	v.SetDefault("server.max_connections", 64)
	v.SetDefault("server.idle_timeout", "10m")
	v.SetDefault("server.query_timeout", "10s")
	v.SetDefault("server.auth_timeout", "10s")
	v.SetDefault("server.max_pending_auth", 32)
}

// resolvePaths makes relative database paths relative to the config file.
func (c *Config) resolvePaths() {
	if c.Path == "" {
		return
	}
	dir := filepath.Dir(c.Path)
	for _, p := range []*string{&c.Database, &c.State} {
		if *p != "" && !filepath.IsAbs(*p) && !isURL(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	if raw, ok := c.Mechanism.Params["ptable"].(string); ok && strings.HasSuffix(strings.ToLower(raw), ".csv") && !filepath.IsAbs(raw) {
		c.Mechanism.Params["ptable"] = filepath.Join(dir, raw)
	}
}

// file is a configuration as written: every key it may hold. Sections
// whose defaults come from another section (an analyst's caps from the
// budget, a table's policy from the top-level one) stay raw here and are
// decoded on top of those defaults.
type file struct {
	Database  string  `mapstructure:"database"`
	State     string  `mapstructure:"state"`
	Audit     Audit   `mapstructure:"audit"`
	Monitor   Monitor `mapstructure:"monitor"`
	Seed      any     `mapstructure:"seed" keys:"hidden"` // refused below; named here so it is not also "unknown"
	Mechanism struct {
		Name   string         `mapstructure:"name"`
		Params map[string]any `mapstructure:"params"`
	} `mapstructure:"mechanism"`
	Mechanisms map[string]map[string]any `mapstructure:"mechanisms"`
	Budget     Budget                    `mapstructure:"budget"`
	Analysts   map[string]any            `mapstructure:"analysts"`
	Server     Server                    `mapstructure:"server"`
	Policy     map[string]any            `mapstructure:"policy"`
	Tables     map[string]tableKeys      `mapstructure:"tables"`
}

// tableKeys is one table's section as written.
type tableKeys struct {
	PrivacyUnit      string         `mapstructure:"privacy_unit"`
	Columns          []string       `mapstructure:"columns"`
	Domains          map[string]any `mapstructure:"domains"`
	Bounds           map[string]any `mapstructure:"bounds"`
	Policy           map[string]any `mapstructure:"policy"`
	MaxRowsPerUnit   *int64         `mapstructure:"max_rows_per_unit"`
	MaxGroupsPerUnit *int64         `mapstructure:"max_groups_per_unit"`
	UnitKeyed        bool           `mapstructure:"unit_keyed"`
}

// policyKeys is ir.Policy with its config keys: the two convert into
// each other, so a field added to one and not the other does not compile.
type policyKeys struct {
	UnitInWhere       bool `mapstructure:"unit_in_where"`
	MaxInList         int  `mapstructure:"max_in_list"`
	MaxConditions     int  `mapstructure:"max_conditions"`
	MaxGroups         int  `mapstructure:"max_groups"`
	AllowOr           bool `mapstructure:"allow_or"`
	AllowNotEqual     bool `mapstructure:"allow_not_equal"`
	AllowLike         bool `mapstructure:"allow_like"`
	AllowMath         bool `mapstructure:"allow_math"`
	Strict            bool `mapstructure:"strict"`
	MaxStatementBytes int  `mapstructure:"max_statement_bytes"`
}

// under names a key of the section at prefix.
func under(prefix string) keys.Options {
	return keys.Options{Name: func(path string) string {
		if prefix == "" {
			return path
		}
		return prefix + "." + path
	}}
}

// isURL reports whether a database setting is a server URL (postgres://...)
// rather than a file path.
func isURL(s string) bool { return strings.Contains(s, "://") }

func checkRange(key string, r Range, fail func(string, string, ...any)) {
	for _, x := range []float64{r.Default, r.Min, r.Max} {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			fail(key, "default, min and max must be finite and not negative")
			return
		}
	}
	if r.Min > r.Max {
		fail(key, "min %g is greater than max %g", r.Min, r.Max)
	} else if r.Default < r.Min || r.Default > r.Max {
		fail(key+".default", "%g is outside [min %g, max %g]", r.Default, r.Min, r.Max)
	}
}

func readTable(key string, tk tableKeys, defaultPolicy ir.Policy) (Table, error) {
	t := Table{
		PrivacyUnit: strings.ToLower(tk.PrivacyUnit),
		Columns:     lowerAll(tk.Columns),
		Domains:     map[string]*ir.Domain{},
	}
	if t.PrivacyUnit == "" {
		return t, fmt.Errorf("%s.privacy_unit: is required: the column that identifies a contributor", key)
	}
	pol, err := readPolicy(key+".policy", tk.Policy, defaultPolicy)
	if err != nil {
		return t, err
	}
	t.Policy = pol
	for name, n := range map[string]*int64{"max_rows_per_unit": tk.MaxRowsPerUnit, "max_groups_per_unit": tk.MaxGroupsPerUnit} {
		if n != nil && *n < 1 {
			return t, fmt.Errorf("%s.%s: must be a whole number >= 1, got %d", key, name, *n)
		}
	}
	t.UnitKeyed = tk.UnitKeyed
	if tk.MaxRowsPerUnit != nil {
		t.Bounds.MaxRowsPerUnit = *tk.MaxRowsPerUnit
	}
	if tk.MaxGroupsPerUnit != nil {
		t.Bounds.MaxGroupsPerUnit = *tk.MaxGroupsPerUnit
	}
	for col, raw := range tk.Domains {
		d, err := parseDomain(raw)
		if err != nil {
			return t, fmt.Errorf("%s.domains.%s: %w", key, col, err)
		}
		t.Domains[strings.ToLower(col)] = d
	}
	for col, raw := range tk.Bounds {
		b, err := parseValueBounds(raw)
		if err != nil {
			return t, fmt.Errorf("%s.bounds.%s: %w", key, col, err)
		}
		if t.ValueBounds == nil {
			t.ValueBounds = map[string]ir.ValueBounds{}
		}
		t.ValueBounds[strings.ToLower(col)] = b
	}
	return t, nil
}

// maxExactBound is 2^53: a bound beyond it is not a whole number a double
// precision holds exactly, and clamped sums are kept in double precision.
const maxExactBound = 1 << 53

// parseValueBounds reads a numeric column's public bounds: {min: lo, max: hi}.
func parseValueBounds(raw any) (ir.ValueBounds, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return ir.ValueBounds{}, errors.New("bounds are a map with min and max, e.g. {min: 0, max: 500000}")
	}
	for k := range m {
		if k != "min" && k != "max" {
			return ir.ValueBounds{}, fmt.Errorf("unknown key %q: bounds take min and max", k)
		}
	}
	lo, okLo := keys.AsFloat64(m["min"])
	hi, okHi := keys.AsFloat64(m["max"])
	switch {
	case !okLo || !okHi:
		return ir.ValueBounds{}, errors.New("bounds need numeric min and max, e.g. {min: 0, max: 500000}")
	case math.IsNaN(lo) || math.IsNaN(hi) || math.Abs(lo) > maxExactBound || math.Abs(hi) > maxExactBound:
		return ir.ValueBounds{}, fmt.Errorf("min and max must be finite numbers within ±%d", int64(maxExactBound))
	case lo > hi:
		return ir.ValueBounds{}, fmt.Errorf("min %g is greater than max %g", lo, hi)
	}
	return ir.ValueBounds{Min: lo, Max: hi}, nil
}

// parseDomain reads a domain: a list of categories, or a map with min and max.
func parseDomain(raw any) (*ir.Domain, error) {
	switch d := raw.(type) {
	case []any:
		if len(d) == 0 {
			return nil, errors.New("a category list must not be empty")
		}
		seen := map[string]bool{}
		cats := make([]string, 0, len(d))
		for _, c := range d {
			s := fmt.Sprint(c)
			if seen[s] {
				return nil, fmt.Errorf("category %q is listed twice", s)
			}
			seen[s] = true
			cats = append(cats, s)
		}
		return &ir.Domain{Categories: cats}, nil
	case map[string]any:
		lo, okLo := keys.AsInt64(d["min"])
		hi, okHi := keys.AsInt64(d["max"])
		if !okLo || !okHi {
			return nil, errors.New("an integer range needs integer min and max, e.g. {min: 0, max: 120}")
		}
		if lo > hi {
			return nil, fmt.Errorf("min %d is greater than max %d", lo, hi)
		}
		// hi-lo overflows past 2^63: compare in unsigned arithmetic.
		if width := uint64(hi) - uint64(lo); width >= 10_000_000 {
			return nil, fmt.Errorf("range from %d to %d is too large to publish cell by cell (at most 10,000,000 values)", lo, hi)
		}
		return &ir.Domain{IsRange: true, Min: lo, Max: hi}, nil
	default:
		return nil, errors.New("must be a list of categories or {min: N, max: M}")
	}
}

// readPolicy overlays the keys set in raw (the section at key) onto base.
// The strict profile turns off OR, <>, LIKE and math whatever else is set.
func readPolicy(key string, raw map[string]any, base ir.Policy) (ir.Policy, error) {
	pk := policyKeys(base)
	opts := under(key)
	opts.Unknown = func(_ string, known []string) string {
		return "unknown policy key (known: " + strings.Join(known, ", ") + ")"
	}
	if err := keys.Decode(raw, &pk, opts); err != nil {
		return base, err
	}
	p := ir.Policy(pk)
	for name, n := range map[string]int{"max_in_list": p.MaxInList, "max_conditions": p.MaxConditions, "max_groups": p.MaxGroups, "max_statement_bytes": p.MaxStatementBytes} {
		if n < 1 {
			return p, fmt.Errorf("%s.%s: must be at least 1, got %d", key, name, n)
		}
	}
	if p.Strict {
		p.AllowOr, p.AllowNotEqual, p.AllowLike, p.AllowMath = false, false, false, false
	}
	return p, nil
}

func lowerAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strings.ToLower(x)
	}
	return out
}

// AnalystCaps returns the caps the config sets for analyst: her own if she
// is listed, else the budget section's.
func (c *Config) AnalystCaps(analyst string) (epsilon, delta float64, listed bool) {
	if a, ok := c.Analysts[analyst]; ok {
		return a.EpsilonCap, a.DeltaCap, true
	}
	return c.Budget.EpsilonCap, c.Budget.DeltaCap, false
}

// AnalystNames lists the analysts the config names, sorted.
func (c *Config) AnalystNames() []string {
	names := make([]string, 0, len(c.Analysts))
	for name := range c.Analysts {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Analyst returns the analyst a command acts for: name when the config
// names that analyst, the config's only analyst when name is empty. Any
// other name is refused, naming the configured analysts: a budget is kept
// per analyst the config lists, and a mistyped name would otherwise be
// charged, granted or reset as an analyst of its own.
func (c *Config) Analyst(name string) (string, error) {
	names := c.AnalystNames()
	if _, ok := c.Analysts[name]; ok {
		return name, nil
	}
	switch {
	case len(names) == 0:
		return "", errors.New("the config names no analysts: add one under analysts:")
	case name == "" && len(names) == 1:
		return names[0], nil
	case name == "":
		return "", fmt.Errorf("the config names %d analysts (%s): say which with --analyst", len(names), strings.Join(names, ", "))
	}
	return "", fmt.Errorf("analyst %q is not in the config; its analysts: %s", name, strings.Join(names, ", "))
}

// IDPPlusOne reports whether the idp section sets plus_one, which the risk
// solvers' variance test must know.
func (c *Config) IDPPlusOne() bool {
	v, _ := c.MechanismSections["idp"]["plus_one"].(bool)
	return v
}

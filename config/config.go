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

	"countwall/planner"
)

// Config is a validated configuration.
type Config struct {
	// Path is the file the config was read from ("" when none); relative
	// database paths are resolved against its directory.
	Path string

	Database  string // the protected database, opened read-only: a SQLite file or a postgres:// URL
	State     string // the state database: secret, audit log, budget ledger
	Mechanism Mechanism
	Budget    Budget
	Analysts  map[string]Analyst
	Server    Server
	Tables    map[string]Table
}

// Mechanism selects the disclosure-control mechanism by name.
type Mechanism struct {
	Name   string
	Params map[string]any
}

// Range is a default per-query value and the range an analyst may SET.
type Range struct {
	Default, Min, Max float64
}

// Budget is the per-query budget share an analyst may choose with SET, and
// the per-analyst caps that apply when the analysts section names none.
type Budget struct {
	Epsilon Range
	Delta   Range
	// EpsilonCap and DeltaCap are each analyst's total; an analyst entry may override.
	EpsilonCap float64
	DeltaCap   float64
	// Reserve is how many queries' worth of budget the ledger may reserve in one
	// durable write (1 = charge every query separately).
	Reserve int
}

// Analyst is one analyst allowed to connect.
type Analyst struct {
	// Password is a SCRAM-SHA-256 verifier as `countwall passwd` prints it.
	Password   string
	EpsilonCap float64
	DeltaCap   float64
}

// Server configures the PostgreSQL wire front door.
type Server struct {
	Listen         string
	TLSCert        string
	TLSKey         string
	Trust          bool // no passwords; only on a loopback address
	MaxConnections int
	IdleTimeout    time.Duration
	QueryTimeout   time.Duration
	// AuthTimeout bounds the time from accept to the end of authentication.
	AuthTimeout time.Duration
	// MaxPendingAuth bounds connections still in startup or authentication,
	// apart from MaxConnections, so that they cannot lock analysts out.
	MaxPendingAuth int
}

// Table is a protected table's configuration.
type Table struct {
	PrivacyUnit string
	// Columns lists the queryable columns; empty means every column.
	Columns []string
	Domains map[string]*planner.Domain
	Policy  planner.Policy
	// Bounds are max_rows_per_unit and max_groups_per_unit: how much one
	// privacy unit may contribute to a query answered by laplace or gaussian.
	// Zero fields take planner.DefaultBounds (1 and 1).
	Bounds planner.Bounds
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

// isURL reports whether a database setting is a server URL (postgres://...)
// rather than a file path.
func isURL(s string) bool { return strings.Contains(s, "://") }

func decode(v *viper.Viper) (*Config, error) {
	var errs []error
	fail := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	cfg := &Config{
		Database:  v.GetString("database"),
		State:     v.GetString("state"),
		Mechanism: Mechanism{Name: v.GetString("mechanism.name")},
	}
	// Parameters come from the mechanisms.NAME section, so that switching
	// mechanism (with --mechanism.name or COUNTWALL_MECHANISM_NAME) picks up
	// that mechanism's own parameters; mechanism.params, if given, overrides.
	cfg.Mechanism.Params = v.GetStringMap("mechanisms." + cfg.Mechanism.Name)
	for k, val := range v.GetStringMap("mechanism.params") {
		cfg.Mechanism.Params[k] = val
	}
	// Noise is always fresh from the operating system. A seed once made it
	// reproducible for tests; a config that still sets one is refused rather
	// than ignored, so nobody believes their noise is seeded, or predictable.
	if v.IsSet("seed") {
		fail("seed", "is not a config key: a seed would make the noise predictable to anyone who knows it; remove it (reproducible noise is for Go tests only)")
	}
	if cfg.Database == "" {
		fail("database", "is required: the path of the SQLite database to protect")
	}
	if cfg.State == "" {
		fail("state", "must not be empty")
	}
	if cfg.Mechanism.Name == "" {
		fail("mechanism.name", "is required")
	}

	cfg.Budget = Budget{
		Epsilon:    readRange(v, "budget.epsilon", fail),
		Delta:      readRange(v, "budget.delta", fail),
		EpsilonCap: v.GetFloat64("budget.epsilon_cap"),
		DeltaCap:   v.GetFloat64("budget.delta_cap"),
		Reserve:    v.GetInt("budget.reserve"),
	}
	if cfg.Budget.Epsilon.Min <= 0 {
		fail("budget.epsilon.min", "must be greater than 0")
	}
	if cfg.Budget.EpsilonCap < 0 || cfg.Budget.DeltaCap < 0 {
		fail("budget", "epsilon_cap and delta_cap must not be negative")
	}
	if cfg.Budget.Reserve < 1 {
		fail("budget.reserve", "must be at least 1, got %d", cfg.Budget.Reserve)
	}

	cfg.Server = Server{
		Listen:         v.GetString("server.listen"),
		TLSCert:        v.GetString("server.tls_cert"),
		TLSKey:         v.GetString("server.tls_key"),
		Trust:          v.GetBool("server.trust"),
		MaxConnections: v.GetInt("server.max_connections"),
		IdleTimeout:    v.GetDuration("server.idle_timeout"),
		QueryTimeout:   v.GetDuration("server.query_timeout"),
		AuthTimeout:    v.GetDuration("server.auth_timeout"),
		MaxPendingAuth: v.GetInt("server.max_pending_auth"),
	}
	if (cfg.Server.TLSCert == "") != (cfg.Server.TLSKey == "") {
		fail("server.tls_cert", "tls_cert and tls_key go together")
	}
	if cfg.Server.MaxConnections < 1 {
		fail("server.max_connections", "must be at least 1")
	}
	if cfg.Server.QueryTimeout <= 0 {
		fail("server.query_timeout", "must be a positive duration such as 10s")
	}
	if cfg.Server.AuthTimeout <= 0 {
		fail("server.auth_timeout", "must be a positive duration such as 10s")
	}
	if cfg.Server.MaxPendingAuth < 1 {
		fail("server.max_pending_auth", "must be at least 1")
	}

	cfg.Analysts = map[string]Analyst{}
	for name := range v.GetStringMap("analysts") {
		key := "analysts." + name
		a := Analyst{
			Password:   v.GetString(key + ".password"),
			EpsilonCap: cfg.Budget.EpsilonCap,
			DeltaCap:   cfg.Budget.DeltaCap,
		}
		if v.IsSet(key + ".epsilon_cap") {
			a.EpsilonCap = v.GetFloat64(key + ".epsilon_cap")
		}
		if v.IsSet(key + ".delta_cap") {
			a.DeltaCap = v.GetFloat64(key + ".delta_cap")
		}
		if a.Password != "" && !strings.HasPrefix(a.Password, "SCRAM-SHA-256$") {
			fail(key+".password", "must be a SCRAM-SHA-256 verifier as `countwall passwd` prints it, not a plain password")
		}
		if a.EpsilonCap < 0 || a.DeltaCap < 0 {
			fail(key, "epsilon_cap and delta_cap must not be negative")
		}
		cfg.Analysts[name] = a
	}

	defaultPolicy, err := readPolicy(v, "policy", planner.DefaultPolicy())
	if err != nil {
		errs = append(errs, err)
	}
	cfg.Tables = map[string]Table{}
	tables := v.GetStringMap("tables")
	if len(tables) == 0 {
		fail("tables", "at least one protected table is required")
	}
	for name := range tables {
		t, err := readTable(v, "tables."+name, defaultPolicy)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cfg.Tables[name] = t
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

func readRange(v *viper.Viper, key string, fail func(string, string, ...any)) Range {
	r := Range{
		Default: v.GetFloat64(key + ".default"),
		Min:     v.GetFloat64(key + ".min"),
		Max:     v.GetFloat64(key + ".max"),
	}
	for _, x := range []float64{r.Default, r.Min, r.Max} {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			fail(key, "default, min and max must be finite and not negative")
			return r
		}
	}
	if r.Min > r.Max {
		fail(key, "min %g is greater than max %g", r.Min, r.Max)
	} else if r.Default < r.Min || r.Default > r.Max {
		fail(key+".default", "%g is outside [min %g, max %g]", r.Default, r.Min, r.Max)
	}
	return r
}

func readTable(v *viper.Viper, key string, defaultPolicy planner.Policy) (Table, error) {
	t := Table{
		PrivacyUnit: strings.ToLower(v.GetString(key + ".privacy_unit")),
		Columns:     lowerAll(v.GetStringSlice(key + ".columns")),
		Domains:     map[string]*planner.Domain{},
	}
	if t.PrivacyUnit == "" {
		return t, fmt.Errorf("%s.privacy_unit: is required: the column that identifies a contributor", key)
	}
	pol, err := readPolicy(v, key+".policy", defaultPolicy)
	if err != nil {
		return t, err
	}
	t.Policy = pol
	for name, dst := range map[string]*int64{"max_rows_per_unit": &t.Bounds.MaxRowsPerUnit, "max_groups_per_unit": &t.Bounds.MaxGroupsPerUnit} {
		if !v.IsSet(key + "." + name) {
			continue
		}
		n, ok := asInt(v.Get(key + "." + name))
		if !ok || n < 1 {
			return t, fmt.Errorf("%s.%s: must be a whole number >= 1, got %v", key, name, v.Get(key+"."+name))
		}
		*dst = n
	}
	for col, raw := range v.GetStringMap(key + ".domains") {
		d, err := parseDomain(raw)
		if err != nil {
			return t, fmt.Errorf("%s.domains.%s: %w", key, col, err)
		}
		t.Domains[strings.ToLower(col)] = d
	}
	return t, nil
}

// parseDomain reads a domain: a list of categories, or a map with min and max.
func parseDomain(raw any) (*planner.Domain, error) {
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
		return &planner.Domain{Categories: cats}, nil
	case map[string]any:
		lo, okLo := asInt(d["min"])
		hi, okHi := asInt(d["max"])
		if !okLo || !okHi {
			return nil, errors.New("an integer range needs integer min and max, e.g. {min: 0, max: 120}")
		}
		if lo > hi {
			return nil, fmt.Errorf("min %d is greater than max %d", lo, hi)
		}
		if hi-lo >= 10_000_000 {
			return nil, fmt.Errorf("range of %d values is too large to publish cell by cell", hi-lo+1)
		}
		return &planner.Domain{IsRange: true, Min: lo, Max: hi}, nil
	default:
		return nil, errors.New("must be a list of categories or {min: N, max: M}")
	}
}

func asInt(x any) (int64, bool) {
	switch n := x.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}

// readPolicy overlays the keys set under key onto base. The strict profile
// turns off OR, <>, LIKE and math whatever else is set.
func readPolicy(v *viper.Viper, key string, base planner.Policy) (planner.Policy, error) {
	p := base
	known := map[string]bool{}
	setBool := func(name string, dst *bool) {
		known[name] = true
		if v.IsSet(key + "." + name) {
			*dst = v.GetBool(key + "." + name)
		}
	}
	setInt := func(name string, dst *int) {
		known[name] = true
		if v.IsSet(key + "." + name) {
			*dst = v.GetInt(key + "." + name)
		}
	}
	setBool("unit_in_where", &p.UnitInWhere)
	setBool("allow_or", &p.AllowOr)
	setBool("allow_not_equal", &p.AllowNotEqual)
	setBool("allow_like", &p.AllowLike)
	setBool("allow_math", &p.AllowMath)
	setBool("strict", &p.Strict)
	setInt("max_in_list", &p.MaxInList)
	setInt("max_conditions", &p.MaxConditions)
	setInt("max_groups", &p.MaxGroups)
	setInt("max_statement_bytes", &p.MaxStatementBytes)
	for name := range v.GetStringMap(key) {
		if !known[name] {
			return p, fmt.Errorf("%s.%s: unknown policy key (known: %s)", key, name, strings.Join(sortedKeys(known), ", "))
		}
	}
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

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func lowerAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strings.ToLower(x)
	}
	return out
}

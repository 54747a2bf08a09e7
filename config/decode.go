package config

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/spf13/viper"

	"countwall/config/keys"
	"countwall/ir"
)

// problems collects every validation error of a config, so that one run of
// the loader names all of them rather than the first.
type problems []error

// fail records what is wrong with key.
func (p *problems) fail(key, format string, args ...any) {
	*p = append(*p, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
}

// add records an error that already names its key.
func (p *problems) add(err error) { *p = append(*p, err) }

// joined is nil without problems, else every problem sorted by text so that
// the message does not depend on map order.
func (p problems) joined() error {
	if len(p) == 0 {
		return nil
	}
	sort.Slice(p, func(i, j int) bool { return p[i].Error() < p[j].Error() })
	return errors.Join(p...)
}

func decode(v *viper.Viper) (*Config, error) {
	var p problems
	var f file
	if err := keys.Decode(v.AllSettings(), &f, under("")); err != nil {
		p.add(err)
	}
	// Noise is always fresh from the operating system. A seed once made it
	// reproducible for tests; a config that still sets one is refused rather
	// than ignored, so nobody believes their noise is seeded, or predictable.
	if v.IsSet("seed") {
		p.fail("seed", "is not a config key: a seed would make the noise predictable to anyone who knows it; remove it (reproducible noise is for Go tests only)")
	}
	cfg := &Config{
		Database:  f.Database,
		State:     f.State,
		Audit:     f.Audit,
		Monitor:   f.Monitor,
		Mechanism: Mechanism{Name: f.Mechanism.Name, Params: map[string]any{}},
		Budget:    f.Budget,
		Server:    f.Server,
	}
	cfg.readMechanismParams(f)
	cfg.checkStateAndAudit(&p)
	cfg.checkBudget(&p)
	cfg.checkServer(&p)
	cfg.readAnalysts(v, &p)
	cfg.readTables(v, f, &p)
	if err := p.joined(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// readMechanismParams takes parameters from the mechanisms.NAME section, so
// that switching mechanism (with --mechanism.name or
// COUNTWALL_MECHANISM_NAME) picks up that mechanism's own parameters;
// mechanism.params, if given, overrides.
func (cfg *Config) readMechanismParams(f file) {
	cfg.MechanismSections = map[string]map[string]any{}
	for name, section := range f.Mechanisms {
		cfg.MechanismSections[strings.ToLower(name)] = section
	}
	for _, section := range []map[string]any{f.Mechanisms[strings.ToLower(cfg.Mechanism.Name)], f.Mechanism.Params} {
		for k, val := range section {
			cfg.Mechanism.Params[k] = val
		}
	}
}

// checkStateAndAudit checks the database paths, the mechanism's name, the
// audit and the monitor.
func (cfg *Config) checkStateAndAudit(p *problems) {
	if cfg.Database == "" {
		p.fail("database", "is required: the path of the SQLite database to protect")
	}
	if cfg.State == "" {
		p.fail("state", "must not be empty")
	}
	if cfg.Mechanism.Name == "" {
		p.fail("mechanism.name", "is required")
	}
	cfg.Audit.Sync = strings.ToLower(cfg.Audit.Sync)
	if cfg.Audit.Sync != "full" && cfg.Audit.Sync != "normal" {
		p.fail("audit.sync", "must be full (on disk before an answer leaves) or normal (in the state's log: survives a crash of countwall, not a power loss), got %q", cfg.Audit.Sync)
	}
	if cfg.Monitor.Every < 0 || (cfg.Monitor.Every > 0 && cfg.Monitor.Every < time.Second) {
		p.fail("monitor.every", "must be 0 (off) or a duration of at least 1s such as 1m, got %s", cfg.Monitor.Every)
	}
	if cfg.Monitor.MaxHistory < 1 {
		p.fail("monitor.max_history", "must be at least 1 (the latest answered statements of an analyst a check reads), got %d", cfg.Monitor.MaxHistory)
	}
	if cfg.Monitor.Suspend && cfg.Monitor.Every == 0 {
		p.fail("monitor.suspend", "needs monitor.every: the check that would suspend is off")
	}
	if cfg.Audit.Retain < 0 {
		p.fail("audit.retain", "must be a duration such as 2160h (90 days), or 0 to keep every row, got %s", cfg.Audit.Retain)
	}
}

func (cfg *Config) checkBudget(p *problems) {
	checkRange("budget.epsilon", cfg.Budget.Epsilon, p.fail)
	checkRange("budget.delta", cfg.Budget.Delta, p.fail)
	if cfg.Budget.Epsilon.Min <= 0 {
		p.fail("budget.epsilon.min", "must be greater than 0")
	}
	if cfg.Budget.EpsilonCap < 0 || cfg.Budget.DeltaCap < 0 {
		p.fail("budget", "epsilon_cap and delta_cap must not be negative")
	}
	if cfg.Budget.Reserve < 1 {
		p.fail("budget.reserve", "must be at least 1, got %d", cfg.Budget.Reserve)
	}
}

func (cfg *Config) checkServer(p *problems) {
	if (cfg.Server.TLSCert == "") != (cfg.Server.TLSKey == "") {
		p.fail("server.tls_cert", "tls_cert and tls_key go together")
	}
	if cfg.Server.MaxConnections < 1 {
		p.fail("server.max_connections", "must be at least 1")
	}
	if cfg.Server.QueryTimeout < time.Millisecond {
		// PostgreSQL counts statement_timeout in milliseconds; a shorter
		// time is up before any statement can run.
		p.fail("server.query_timeout", "must be a duration of at least 1ms, such as 10s")
	}
	if cfg.Server.AuthTimeout <= 0 {
		p.fail("server.auth_timeout", "must be a positive duration such as 10s")
	}
	if cfg.Server.MaxPendingAuth < 1 {
		p.fail("server.max_pending_auth", "must be at least 1")
	}
	if a := cfg.Server.MetricsListen; a != "" {
		if _, _, err := net.SplitHostPort(a); err != nil {
			p.fail("server.metrics_listen", "must be host:port such as 127.0.0.1:9187, got %q", a)
		}
	}
}

// readAnalysts reads viper's own map rather than its settings: those leave
// out an analyst with nothing under her name (`bob: {}`), who is an analyst
// all the same.
func (cfg *Config) readAnalysts(v *viper.Viper, p *problems) {
	cfg.Analysts = map[string]Analyst{}
	for name, raw := range v.GetStringMap("analysts") {
		key := "analysts." + name
		a := Analyst{EpsilonCap: cfg.Budget.EpsilonCap, DeltaCap: cfg.Budget.DeltaCap}
		if raw != nil { // `bob:` with nothing under it is an analyst with the defaults
			if err := keys.Decode(raw, &a, under(key)); err != nil {
				p.add(err)
				continue
			}
		}
		if a.Password != "" && !strings.HasPrefix(a.Password, "SCRAM-SHA-256$") {
			p.fail(key+".password", "must be a SCRAM-SHA-256 verifier as `countwall passwd` prints it, not a plain password")
		}
		if a.EpsilonCap < 0 || a.DeltaCap < 0 {
			p.fail(key, "epsilon_cap and delta_cap must not be negative")
		}
		cfg.Analysts[name] = a
	}
}

func (cfg *Config) readTables(v *viper.Viper, f file, p *problems) {
	defaultPolicy, err := readPolicy("policy", f.Policy, ir.DefaultPolicy())
	if err != nil {
		p.add(err)
	}
	cfg.Tables = map[string]Table{}
	if len(v.GetStringMap("tables")) == 0 {
		p.fail("tables", "at least one protected table is required")
	}
	for name, tk := range f.Tables {
		t, err := readTable("tables."+name, tk, defaultPolicy)
		if err != nil {
			p.add(err)
			continue
		}
		cfg.Tables[name] = t
	}
}

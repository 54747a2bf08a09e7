package proxy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"countwall/config"
	"countwall/ir"
	"countwall/pgerror"
)

// forbiddenBackend fails the test whenever a statement reaches the data.
type forbiddenBackend struct {
	t     *testing.T
	calls atomic.Int64
	stmt  atomic.Value // the statement under test, for the failure message
}

func (b *forbiddenBackend) Run(context.Context, *ir.Table, *ir.Query, ir.Needs, []byte) (*ir.Result, error) {
	b.calls.Add(1)
	b.t.Errorf("the protected data was read for a statement that is refused: %v", b.stmt.Load())
	return nil, errors.New("forbidden backend")
}

// refusalCase is one statement the firewall must refuse without reading.
type refusalCase struct {
	name      string
	mechanism string
	cfg       func(*config.Config) // optional changes to the config
	setup     []string             // statements that must succeed first (SETs)
	stmt      string
	code      pgerror.Code
}

// refusalsBeforeRead covers every row of the table of refusals in docs/analyst.md that
// a statement (rather than a protocol message) can reach, plus the refusals
// of the mechanisms and the ledger: shares, domains, noise parameters, caps.
var refusalsBeforeRead = []refusalCase{
	{name: "syntax", mechanism: "laplace", stmt: "SELEC COUNT(*) FROM people", code: pgerror.SyntaxError},
	{name: "two statements", mechanism: "laplace", stmt: "SELECT COUNT(*) FROM people; SELECT COUNT(*) FROM people", code: pgerror.SyntaxError},
	{name: "select star", mechanism: "laplace", stmt: "SELECT * FROM people", code: pgerror.FeatureNotSupported},
	{name: "sum", mechanism: "laplace", stmt: "SELECT SUM(age) FROM people", code: pgerror.FeatureNotSupported},
	{name: "having", mechanism: "laplace", stmt: "SELECT sex, COUNT(*) FROM people GROUP BY sex HAVING COUNT(*) > 1", code: pgerror.FeatureNotSupported},
	{name: "join", mechanism: "laplace", stmt: "SELECT COUNT(*) FROM people a JOIN people b ON a.id = b.id", code: pgerror.FeatureNotSupported},
	{name: "catalog", mechanism: "laplace", stmt: "SELECT COUNT(*) FROM people JOIN pg_catalog.pg_class c ON c.relname = people.suburb", code: pgerror.FeatureNotSupported},
	{name: "group by without a domain under laplace without partition selection", mechanism: "laplace", cfg: noPartitionSelection,
		stmt: "SELECT suburb, COUNT(*) FROM people GROUP BY suburb", code: pgerror.FeatureNotSupported},
	{name: "group by without a domain under gaussian without partition selection", mechanism: "gaussian", cfg: noPartitionSelection,
		stmt: "SELECT suburb, COUNT(*) FROM people GROUP BY suburb", code: pgerror.FeatureNotSupported},
	{name: "partition selection under laplace with delta 0", mechanism: "laplace", setup: []string{"SET delta = 0"},
		stmt: "SELECT suburb, COUNT(*) FROM people GROUP BY suburb", code: pgerror.InvalidParameterValue},
	{name: "partition selection's delta over the cap under laplace", mechanism: "laplace",
		cfg:  func(c *config.Config) { c.Budget.DeltaCap = 1e-7 },
		stmt: "SELECT suburb, COUNT(*) FROM people GROUP BY suburb", code: pgerror.ConfigurationLimitExceeded},
	{name: "partition selection's delta over the cap under gaussian", mechanism: "gaussian",
		cfg:  func(c *config.Config) { c.Budget.DeltaCap = 1e-7 },
		stmt: "SELECT suburb, COUNT(*) FROM people GROUP BY suburb", code: pgerror.ConfigurationLimitExceeded},
	{name: "partition selection's epsilon over the cap under gaussian", mechanism: "gaussian",
		cfg:  func(c *config.Config) { c.Budget.EpsilonCap = 0.04 },
		stmt: "SELECT suburb, COUNT(*) FROM people GROUP BY suburb", code: pgerror.ConfigurationLimitExceeded},
	{name: "group by without a domain under idp", mechanism: "idp", stmt: "SELECT suburb, COUNT(*) FROM people GROUP BY suburb", code: pgerror.FeatureNotSupported},
	{name: "group by without a domain under cellkey", mechanism: "cellkey", stmt: "SELECT suburb, COUNT(*) FROM people GROUP BY suburb", code: pgerror.FeatureNotSupported},
	{name: "write", mechanism: "laplace", stmt: "DELETE FROM people", code: pgerror.ReadOnlySQLTransaction},
	{name: "unknown table", mechanism: "laplace", stmt: "SELECT COUNT(*) FROM nosuch", code: pgerror.UndefinedTable},
	{name: "unknown column", mechanism: "laplace", stmt: "SELECT COUNT(*) FROM people WHERE nosuch = 1", code: pgerror.UndefinedColumn},
	{name: "wrong literal type", mechanism: "laplace", stmt: "SELECT COUNT(*) FROM people WHERE suburb = 3", code: pgerror.UndefinedFunction},
	{name: "invalid integer input", mechanism: "laplace", stmt: "SELECT COUNT(*) FROM people WHERE age = 'x'", code: pgerror.InvalidTextRepresentation},
	{name: "grouping", mechanism: "laplace", stmt: "SELECT sex, COUNT(*) FROM people", code: pgerror.GroupingError},
	{name: "unit in where", mechanism: "laplace", stmt: "SELECT COUNT(*) FROM people WHERE id = 3", code: pgerror.InsufficientPrivilege},
	{name: "long in list", mechanism: "laplace", stmt: "SELECT COUNT(*) FROM people WHERE age IN (" + numbers(51) + ")", code: pgerror.ProgramLimitExceeded},
	{name: "domain product over max_groups", mechanism: "laplace",
		cfg:  func(c *config.Config) { setPolicy(c, func(p *ir.Policy) { p.MaxGroups = 10 }) },
		stmt: "SELECT age, COUNT(*) FROM people GROUP BY age", code: pgerror.ProgramLimitExceeded},
	{name: "unknown setting", mechanism: "laplace", stmt: "SET nosuch = 1", code: pgerror.UndefinedObject},
	{name: "epsilon out of range", mechanism: "laplace", stmt: "SET epsilon = 5", code: pgerror.InvalidParameterValue},
	{name: "zero delta under gaussian", mechanism: "gaussian", stmt: "SET delta = 0", code: pgerror.InvalidParameterValue},
	{name: "budget exhausted under laplace", mechanism: "laplace",
		cfg:  func(c *config.Config) { c.Budget.EpsilonCap = 0.05 },
		stmt: "SELECT COUNT(*) FROM people", code: pgerror.ConfigurationLimitExceeded},
	{name: "budget exhausted under gaussian", mechanism: "gaussian",
		cfg:  func(c *config.Config) { c.Budget.EpsilonCap = 0.01 },
		stmt: "SELECT COUNT(*) FROM people", code: pgerror.ConfigurationLimitExceeded},
	{name: "budget exhausted under idp", mechanism: "idp",
		cfg:  func(c *config.Config) { c.Budget.EpsilonCap = 0.05 },
		stmt: "SELECT COUNT(*) > 10 FROM people WHERE age = 30", code: pgerror.ConfigurationLimitExceeded},
	{name: "budget exhausted under bdp", mechanism: "bdp",
		cfg:  func(c *config.Config) { c.Budget.EpsilonCap = 0.05 },
		stmt: "SELECT COUNT(*) FROM people WHERE sex = 'F'", code: pgerror.ConfigurationLimitExceeded},
}

// noPartitionSelection turns laplace's and gaussian's partition selection
// off, so that a GROUP BY over undeclared columns is refused.
func noPartitionSelection(c *config.Config) {
	c.Mechanism.Params = map[string]any{"partition_selection": map[string]any{"enabled": false}}
}

func numbers(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprint(18 + i)
	}
	return strings.Join(parts, ", ")
}

func setPolicy(c *config.Config, change func(*ir.Policy)) {
	for name, tc := range c.Tables {
		change(&tc.Policy)
		c.Tables[name] = tc
	}
}

// TestRefusedStatementsNeverReadTheData sends every refusal through an
// Engine whose backend fails the test when called: a refused statement
// must be refused from its text, the schema, the config and the ledger
// alone, so that neither the refusal nor its timing depends on the rows. It
// also checks that nothing was charged.
func TestRefusedStatementsNeverReadTheData(t *testing.T) {
	f := newFixture(t, 200)
	for _, tc := range refusalsBeforeRead {
		t.Run(tc.name, func(t *testing.T) {
			f.state = t.TempDir() + "/state.db"
			cfg := f.config(t, tc.mechanism, nil)
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			e, err := Open(context.Background(), cfg, Options{NoiseSeed: 1})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer e.Close()
			forbidden := &forbiddenBackend{t: t}
			forbidden.stmt.Store(tc.stmt)
			e.backend = forbidden
			s := e.NewSession("alice")
			defer s.Close()
			for _, sql := range tc.setup {
				if _, err := s.Exec(context.Background(), sql, nil); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
			}
			_, err = s.Exec(context.Background(), tc.stmt, nil)
			if got := pgerror.SQLState(err); got != tc.code {
				t.Fatalf("%s: SQLSTATE %q (%v), want %q", tc.stmt, got, err, tc.code)
			}
			if n := forbidden.calls.Load(); n != 0 {
				t.Fatalf("%s: the backend was called %d times", tc.stmt, n)
			}
			bals, err := e.budget.Balances(context.Background(), "alice")
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bals {
				if b.EpsilonSpent != 0 || b.DeltaSpent != 0 || b.RhoSpent != 0 {
					t.Fatalf("%s: charged %+v for a refused statement", tc.stmt, b)
				}
			}
		})
	}
}

// TestUnusableShareIsRefusedAtSet checks that a share the mechanism cannot
// use is refused when it is set, and that a config whose default share
// cannot be used does not start.
func TestUnusableShareIsRefusedAtSet(t *testing.T) {
	f := newFixture(t, 50)
	tests := []struct {
		mechanism string
		stmt      string
		code      pgerror.Code // "" when accepted
	}{
		{"gaussian", "SET delta = 0", pgerror.InvalidParameterValue},
		{"gaussian", "SET delta = 1e-6", ""},
		{"laplace", "SET delta = 0", ""}, // laplace does not use delta
		{"laplace", "SET epsilon = 0.5", ""},
		{"idp", "SET epsilon = 0.01", ""},
	}
	for _, tc := range tests {
		t.Run(tc.mechanism+" "+tc.stmt, func(t *testing.T) {
			e := f.open(t, tc.mechanism, nil)
			s := e.NewSession("alice")
			defer s.Close()
			_, err := s.Exec(context.Background(), tc.stmt, nil)
			if got := pgerror.SQLState(err); got != tc.code {
				t.Fatalf("SQLSTATE %q (%v), want %q", got, err, tc.code)
			}
		})
	}

	cfg := f.config(t, "gaussian", nil)
	cfg.Budget.Delta.Default = 0
	if e, err := Open(context.Background(), cfg, Options{}); err == nil {
		e.Close()
		t.Fatal("a gaussian config whose default delta is 0 started")
	} else if !strings.Contains(err.Error(), "default share") {
		t.Fatalf("error %q does not name the default share", err)
	}
}

// TestShowBudgetConvertsRhoAtTheDeltaCap: SHOW budget shows gaussian's zCDP
// spending converted to epsilon at the delta cap the charges are held to
// (1e-5 in the fixture's config), as the charge's notice does, never at an
// unlimited delta.
func TestShowBudgetConvertsRhoAtTheDeltaCap(t *testing.T) {
	f := newFixture(t, 100)
	e := f.open(t, "gaussian", nil)
	s := e.NewSession("alice")
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Exec(ctx, "SELECT COUNT(*) FROM people WHERE age > 30", nil); err != nil {
		t.Fatal(err)
	}
	res, err := s.Exec(ctx, "SHOW budget", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		if row[0].Text != "dp" {
			continue
		}
		rho, eps, delta := row[5].Float, row[1].Float, row[3].Float
		if want := ir.ZCDPEpsilon(rho, 1e-5); rho <= 0 || math.Abs(eps-want) > 1e-12 || delta != 1e-5 {
			t.Fatalf("dp row: epsilon %g delta %g for rho %g; want epsilon %g at delta 1e-5", eps, delta, rho, want)
		}
		return
	}
	t.Fatal("no dp row")
}

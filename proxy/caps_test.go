package proxy

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"countwall/config"
	"countwall/mechanisms"
	"countwall/pgerror"
	"countwall/proxy/state"
)

// TestReloadNeverRaisesACap reproduces the issue: alice has her own cap of
// 0.05; removing her from the config while her session is open ends that
// session (57P01), a new session does not get the global cap, re-adding her
// with a higher cap does not raise it, and only a grant does.
func TestReloadNeverRaisesACap(t *testing.T) {
	f := newFixture(t, 200)
	ctx := context.Background()
	cfg := f.config(t, "laplace", nil)
	cfg.Budget.Epsilon.Default = 0.01
	cfg.Budget.EpsilonCap = 1
	cfg.Analysts = map[string]config.Analyst{
		"alice": {EpsilonCap: 0.05, DeltaCap: 1e-5},
		"bob":   {EpsilonCap: 1, DeltaCap: 1e-5},
	}
	e, err := Open(ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const q = "SELECT COUNT(*) FROM people WHERE sex = 'F'"
	code := func(err error) pgerror.Code {
		var pe *pgerror.Error
		if errors.As(err, &pe) {
			return pe.Code
		}
		if err != nil {
			return pgerror.Code("other: " + err.Error())
		}
		return "answered"
	}
	alice, bob := e.NewSession("alice"), e.NewSession("bob")
	defer alice.Close()
	defer bob.Close()
	for i := 0; i < 2; i++ {
		if _, err := alice.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}

	withoutAlice := *cfg
	withoutAlice.Analysts = map[string]config.Analyst{"bob": cfg.Analysts["bob"]}
	if err := e.Reload(ctx, &withoutAlice); err != nil {
		t.Fatal(err)
	}
	select {
	case <-alice.Done():
	default:
		t.Fatal("alice's session was not ended by the reload that removed her")
	}
	if _, err := alice.Exec(ctx, q, nil); code(err) != pgerror.AdminShutdown {
		t.Fatalf("alice's open session after her removal: %s, want %s", code(err), pgerror.AdminShutdown)
	}
	select {
	case <-bob.Done():
		t.Fatal("bob's session was ended, but bob is still in the config")
	default:
	}
	if _, err := bob.Exec(ctx, q, nil); err != nil {
		t.Fatalf("bob after the reload: %v", err)
	}

	// A new session of hers (as trust or an in-process caller could open)
	// is held to her cap, not the global one: 3 more answers of 0.01.
	again := e.NewSession("alice")
	defer again.Close()
	var outcomes []pgerror.Code
	for i := 0; i < 5; i++ {
		_, err := again.Exec(ctx, q, nil)
		outcomes = append(outcomes, code(err))
	}
	want := []pgerror.Code{"answered", "answered", "answered", pgerror.ConfigurationLimitExceeded, pgerror.ConfigurationLimitExceeded}
	for i := range want {
		if outcomes[i] != want[i] {
			t.Fatalf("after removal, alice's queries: %v, want %v", outcomes, want)
		}
	}

	// Re-added with a higher cap: still held at 0.05.
	higher := *cfg
	higher.Analysts = map[string]config.Analyst{"alice": {EpsilonCap: 1, DeltaCap: 1e-5}, "bob": cfg.Analysts["bob"]}
	if err := e.Reload(ctx, &higher); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Exec(ctx, q, nil); code(err) != pgerror.ConfigurationLimitExceeded {
		t.Fatalf("re-added with a higher cap, alice's query: %s, want %s", code(err), pgerror.ConfigurationLimitExceeded)
	}
	bals, err := e.budget.Balances(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if bals[0].Kind != mechanisms.AccountingDP || bals[0].EpsilonCap != 0.05 {
		t.Errorf("SHOW budget's dp cap = %+v, want 0.05", bals[0])
	}

	// A grant is the way up.
	l, err := state.OpenLedger(ctx, e.state.SQL(), state.LedgerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Grant(ctx, "alice", mechanisms.AccountingDP, 0.02, 0); err != nil {
		t.Fatal(err)
	}
	for i, want := range []pgerror.Code{"answered", "answered", pgerror.ConfigurationLimitExceeded} {
		if _, err := again.Exec(ctx, q, nil); code(err) != want {
			t.Fatalf("after a grant of 0.02, query %d: %s, want %s", i+1, code(err), want)
		}
	}

	// Lowering works at once, for sessions already open.
	lower := higher
	lower.Analysts = map[string]config.Analyst{"alice": higher.Analysts["alice"], "bob": {EpsilonCap: 0.01, DeltaCap: 1e-5}}
	if err := e.Reload(ctx, &lower); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Exec(ctx, q, nil); code(err) != pgerror.ConfigurationLimitExceeded {
		t.Fatalf("bob past a lowered cap: %s, want %s", code(err), pgerror.ConfigurationLimitExceeded)
	}
}

// TestCapsHeldAcrossRestart: the held cap is durable, so a restart with a
// higher cap in the config does not raise it either; an analyst who never
// spent anything in the ledger is held to the caps of the last config that
// listed her.
func TestCapsHeldAcrossRestart(t *testing.T) {
	f := newFixture(t, 50)
	ctx := context.Background()
	open := func(aliceCap float64) *Engine {
		cfg := f.config(t, "laplace", nil)
		cfg.Budget.Epsilon.Default = 0.01
		cfg.Analysts = map[string]config.Analyst{"alice": {EpsilonCap: aliceCap, DeltaCap: 1e-5}, "carol": {EpsilonCap: aliceCap, DeltaCap: 1e-5}}
		e, err := Open(ctx, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open(0.01)
	if _, err := e.Query(ctx, "alice", "SELECT COUNT(*) FROM people"); err != nil {
		t.Fatal(err)
	}
	// carol never queries; a reload raising her cap leaves it where it was.
	raised := *e.Config()
	raised.Analysts = map[string]config.Analyst{"alice": {EpsilonCap: 0.01, DeltaCap: 1e-5}, "carol": {EpsilonCap: 5, DeltaCap: 1e-5}}
	if err := e.Reload(ctx, &raised); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e = open(1)
	defer e.Close()
	for _, who := range []string{"alice", "carol"} {
		bals, err := e.budget.Balances(ctx, who)
		if err != nil {
			t.Fatal(err)
		}
		if bals[0].EpsilonCap != 0.01 {
			t.Errorf("%s's dp cap after a restart with a higher config cap = %g, want 0.01", who, bals[0].EpsilonCap)
		}
	}
	if _, err := e.Query(ctx, "alice", "SELECT COUNT(*) FROM people"); !errors.Is(err, err) || pgerror.SQLState(err) != pgerror.ConfigurationLimitExceeded {
		t.Errorf("alice after a restart with a higher cap: %v, want 53400", err)
	}
}

// TestClosedSessionsAreForgotten: the engine tracks open sessions (so that a
// reload can end them) and forgets closed ones, including Query's own.
func TestClosedSessionsAreForgotten(t *testing.T) {
	f := newFixture(t, 20)
	e := f.open(t, "exact", nil)
	open := func() int {
		e.sessionsMu.Lock()
		defer e.sessionsMu.Unlock()
		return len(e.sessions)
	}
	for i := 0; i < 3; i++ {
		if _, err := e.Query(context.Background(), "alice", "SELECT COUNT(*) FROM people"); err != nil {
			t.Fatal(err)
		}
	}
	s := e.NewSession("bob")
	if n := open(); n != 1 {
		t.Errorf("%d sessions tracked, want 1 (bob's)", n)
	}
	s.Close()
	if n := open(); n != 0 {
		t.Errorf("%d sessions tracked after every one closed", n)
	}
}

// A cap raised in the config, which a reload or a restart does not apply,
// is logged at WARN with what is held and the grants that would apply it;
// a cap left alone or lowered logs nothing.
func TestRaisedCapsAreLogged(t *testing.T) {
	f := newFixture(t, 50)
	ctx := context.Background()
	var logs bytes.Buffer
	withCaps := func(alice, bob float64) *config.Config {
		cfg := f.config(t, "laplace", nil)
		cfg.Analysts = map[string]config.Analyst{"alice": {EpsilonCap: alice, DeltaCap: 1e-5}, "bob": {EpsilonCap: bob, DeltaCap: 1e-5}}
		return cfg
	}
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	e, err := Open(ctx, withCaps(1, 1), Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Query(ctx, "alice", "SELECT COUNT(*) FROM people"); err != nil {
		t.Fatal(err)
	}
	path := e.Config().Path
	aliceRaised := `level=WARN msg="budget cap raised in the config is not applied: a reload or restart never raises a cap; grant the difference"` +
		` analyst=alice kinds=dp,idp,bdp epsilon_cap_in_config=2 epsilon_cap_held=1 to_raise="countwall budget grant alice --kind dp --epsilon 1 --config ` + path +
		`; countwall budget grant alice --kind idp --epsilon 1 --config ` + path + `; countwall budget grant alice --kind bdp --epsilon 1 --config ` + path + `"`
	tests := []struct {
		name       string
		alice, bob float64
		restart    bool
		want       []string
	}{
		{"unchanged", 1, 1, false, nil},
		{"alice raised", 2, 1, false, []string{aliceRaised}},
		{"still raised", 2, 1, false, []string{aliceRaised}},
		{"bob lowered", 2, 0.5, false, []string{aliceRaised}},
		{"restarted raised", 2, 0.5, true, []string{aliceRaised}},
		{"alice back down", 1, 0.5, false, nil},
	}
	for _, tt := range tests {
		logs.Reset()
		cfg := withCaps(tt.alice, tt.bob)
		if tt.restart {
			e.Close()
			if e, err = Open(ctx, cfg, Options{Logger: logger}); err != nil {
				t.Fatal(err)
			}
		} else if err := e.Reload(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			if strings.Contains(l, "budget cap") {
				got = append(got, l)
			}
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s: logged\n%s\nwant\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
	e.Close()
}

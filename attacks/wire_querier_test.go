package attacks_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"countwall/attacks"
	"countwall/proxy"
	"countwall/proxy/pgwire"
)

// holdSession is an Engine session whose Execute, once held, tells entered
// and waits for release: a statement the server is still working on when
// the client gives up on it.
type holdSession struct {
	pgwire.Session
	held    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (h *holdSession) Execute(ctx context.Context, st *proxy.Statement, args []*string) (*proxy.Result, error) {
	if h.held.Load() {
		h.entered <- struct{}{}
		<-h.release
	}
	return h.Session.Execute(ctx, st, args)
}

// Wire, the attacks' connection to a running firewall, reads the same rows
// and the same refusals (SQLSTATE and hint) as a session in process, stays
// usable after a refusal and after a context that ended before the
// statement was sent, and is given up, saying so, when its context ends
// while the firewall works on a statement.
func TestWireAnswersAsInProcessAndGivesUpOnCancel(t *testing.T) {
	ctx := context.Background()
	e, _ := syntheticEngineOpen(t, "cellkey", "ptable: uniform, D: 2, suppress_at: 4", "normal")
	hold := &holdSession{entered: make(chan struct{}), release: make(chan struct{})}
	srv := pgwire.New(func(analyst string) pgwire.Session {
		hold.Session = e.NewSession(analyst)
		return hold
	}, pgwire.Options{Trust: true})
	w := dialWire(t, startWire(t, srv, "tcp"))
	local := attacks.InProcess{Session: e.NewSession("mallory")}

	for _, sql := range []string{
		"SELECT COUNT(*) FROM synthetic WHERE value = 25",
		"SELECT COUNT(*) > 40 FROM synthetic WHERE value BETWEEN 20 AND 30",
		"SELECT value, COUNT(*) FROM synthetic WHERE value < 5 GROUP BY value",
		"SHOW mechanism",
	} {
		got, err := w.Query(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		want, err := local.Query(ctx, sql)
		if err != nil {
			t.Fatalf("%s in process: %v", sql, err)
		}
		if !reflect.DeepEqual(got.Columns, want.Columns) || !reflect.DeepEqual(got.Values, want.Values) {
			t.Errorf("%s: over the wire %v %v, in process %v %v", sql, got.Columns, got.Values, want.Columns, want.Values)
		}
	}

	const refused = "EXPLAIN"
	_, wantErr := local.Query(ctx, refused)
	hint := wantErr.(interface{ HintText() string }).HintText()
	_, err := w.Query(ctx, refused)
	if err == nil || attacks.SQLState(err) != attacks.SQLState(wantErr) || hint == "" || !strings.Contains(attacks.WithHint(err).Error(), hint) {
		t.Errorf("%s: over the wire %v (SQLSTATE %s), in process %v (SQLSTATE %s, hint %q)", refused, attacks.WithHint(err), attacks.SQLState(err), wantErr, attacks.SQLState(wantErr), hint)
	}

	ended, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.Query(ended, "SELECT COUNT(*) FROM synthetic"); !errors.Is(err, context.Canceled) {
		t.Errorf("a statement under an ended context: %v", err)
	}
	if _, err := w.Query(ctx, "SELECT COUNT(*) FROM synthetic"); err != nil {
		t.Fatalf("after a refusal and an ended context: %v", err)
	}

	hold.held.Store(true)
	cut, cancel := context.WithCancel(ctx)
	go func() {
		<-hold.entered
		cancel()
	}()
	if _, err := w.Query(cut, "SELECT COUNT(*) FROM synthetic"); !errors.Is(err, context.Canceled) {
		t.Errorf("a statement cut off while the firewall worked on it: %v", err)
	}
	close(hold.release)
	if _, err := w.Query(ctx, "SELECT COUNT(*) FROM synthetic"); err == nil || !strings.Contains(err.Error(), "unusable") {
		t.Errorf("the connection after a cut-off statement: %v", err)
	}
}

package pgwire

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"countwall/proxy"
	"countwall/proxy/state"
)

// meteredSession is a session decorator as a metrics or tracing layer
// writes one: it counts what it sees and passes every call on. Session
// requires the auditing calls (Refused, Done, Execute's own audit), so a
// decorator that forgot one would not satisfy the assertion below; with
// optional interfaces it compiled and silently audited less.
type meteredSession struct {
	inner              Session
	executed, refusals *atomic.Int64
}

var _ Session = meteredSession{}

func (m meteredSession) Prepare(sql string) *proxy.Statement { return m.inner.Prepare(sql) }

func (m meteredSession) Describe(ctx context.Context, st *proxy.Statement) (*proxy.Description, error) {
	return m.inner.Describe(ctx, st)
}

func (m meteredSession) Execute(ctx context.Context, st *proxy.Statement, args []*string) (*proxy.Result, error) {
	m.executed.Add(1)
	return m.inner.Execute(ctx, st, args)
}

func (m meteredSession) Refused(st *proxy.Statement, err error) {
	m.refusals.Add(1)
	m.inner.Refused(st, err)
}

func (m meteredSession) Settings() proxy.Settings               { return m.inner.Settings() }
func (m meteredSession) RestoreSettings(saved proxy.Settings)   { m.inner.RestoreSettings(saved) }
func (m meteredSession) Setting(name string) (string, bool)     { return m.inner.Setting(name) }
func (m meteredSession) UseStartupSettings(d map[string]string) { m.inner.UseStartupSettings(d) }
func (m meteredSession) Done() <-chan struct{}                  { return m.inner.Done() }
func (m meteredSession) Close()                                 { m.inner.Close() }

// TestDecoratedSessionAuditsEveryStatement serves the engine's sessions
// through a decorator and sends statements answered or refused at every
// stage the wire has (simple query, Parse, Bind, Execute, a failed
// transaction block): each is audited once, and a reload that removes the
// analyst still ends her connection.
func TestDecoratedSessionAuditsEveryStatement(t *testing.T) {
	var executed, refusals atomic.Int64
	decorate := func(s *Server) {
		open := s.sessions
		s.sessions = func(analyst string) Session {
			return meteredSession{inner: open(analyst), executed: &executed, refusals: &refusals}
		}
	}
	ts := startServer(t, "exact", nil, nil, decorate)
	ctx := context.Background()
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	pg := conn.PgConn()
	simple := func(sql string) error {
		_, err := pg.Exec(ctx, sql).ReadAll()
		return err
	}
	extended := func(sql string, params [][]byte, oids []uint32, formats []int16) error {
		return pg.ExecParams(ctx, sql, params, oids, formats, nil).Read().Err
	}
	sent := []struct {
		name     string
		send     func() error
		refused  bool
		executed bool // reached Execute (audited by the engine), else Refused
	}{
		{"simple answered", func() error { return simple("SELECT COUNT(*) FROM people") }, false, true},
		{"simple refused", func() error { return simple("SELEC COUNT(*) FROM people") }, true, true},
		{"refused at Parse", func() error {
			return extended("DELETE FROM people WHERE id = $1", [][]byte{[]byte("1")}, nil, nil)
		}, true, false},
		{"refused at Bind", func() error {
			return extended("SELECT COUNT(*) FROM people WHERE age > $1", [][]byte{{1, 2, 3}}, []uint32{20}, []int16{1})
		}, true, false},
		{"refused at Execute", func() error {
			return extended("SELECT COUNT(*) FROM people WHERE age > $1", [][]byte{[]byte("x")}, nil, nil)
		}, true, true},
		{"extended answered", func() error {
			return extended("SELECT COUNT(*) FROM people WHERE sex = $1", [][]byte{[]byte("F")}, nil, nil)
		}, false, true},
		{"BEGIN", func() error { return simple("BEGIN") }, false, true},
		{"error in the block", func() error { return simple("SELECT * FROM people") }, true, true},
		{"refused in the failed block", func() error { return simple("SELECT COUNT(*) FROM people") }, true, false},
		{"ROLLBACK", func() error { return simple("ROLLBACK") }, false, true},
	}
	var wantExecuted, wantRefusals int64
	for _, s := range sent {
		err := s.send()
		var pe *pgconn.PgError
		if s.refused != errors.As(err, &pe) {
			t.Fatalf("%s: error %v, refused should be %v", s.name, err, s.refused)
		}
		if s.executed {
			wantExecuted++
		} else {
			wantRefusals++
		}
	}
	log, err := ts.engine.AuditLog(ctx, state.AuditFilter{Analyst: testAnalyst})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != len(sent) {
		t.Errorf("%d statements sent through the decorator, %d audited", len(sent), len(log))
	}
	if executed.Load() != wantExecuted || refusals.Load() != wantRefusals {
		t.Errorf("the decorator saw %d executions and %d refusals, want %d and %d", executed.Load(), refusals.Load(), wantExecuted, wantRefusals)
	}

	var pe *pgconn.PgError
	if err := removeAnalysts(t, ts, pg); !errors.As(err, &pe) || pe.Code != "57P01" {
		t.Fatalf("after her removal, the decorated connection got %v, want FATAL 57P01", err)
	}
}

// removeAnalysts reloads the server's config without its analysts and
// returns what the connection then receives, waiting up to ten seconds.
func removeAnalysts(t *testing.T, ts *testServer, pg *pgconn.PgConn) error {
	t.Helper()
	ctx := context.Background()
	next := *ts.cfg
	next.Analysts = nil
	if err := ts.engine.Reload(ctx, &next); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return pg.WaitForNotification(wait)
}

package pgwire

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/proxy"
	"countwall/proxy/state"
)

// writeCounter is a listener whose connections count their writes.
type writeCounter struct {
	net.Listener
	writes atomic.Int64
}

func (l *writeCounter) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: nc, writes: &l.writes}, nil
}

type countedConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countedConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// answers reads n Query messages' answers: each one's count, or its
// SQLSTATE when refused.
func answers(t *testing.T, fe *pgproto3.Frontend, n int) []string {
	t.Helper()
	var out []string
	cur := ""
	for len(out) < n {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			cur = string(m.Values[0])
		case *pgproto3.ErrorResponse:
			cur = "SQLSTATE " + m.Code
		case *pgproto3.ReadyForQuery:
			out = append(out, cur)
			cur = ""
		}
	}
	return out
}

// Query messages sent together (pipelined) are answered in order, each as
// it would be alone (a refusal in the middle leaves the next statements
// answered), in one write once the server has used up its input, and every
// statement is audited: the answers left after their audit rows were
// committed, together.
func TestPipelinedQueriesAreAnsweredTogether(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := loadConfig(t, dir, "exact", nil)
	engine, err := proxy.Open(ctx, cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(func(a string) Session { return engine.NewSession(a) }, Options{
		Verifier: func(a string) (string, bool) {
			an, ok := engine.Config().Analysts[a]
			return an.Password, ok
		},
		IdleTimeout: time.Minute,
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &writeCounter{Listener: l}
	go srv.Serve(counted) //nolint:errcheck // ends with ErrServerClosed at cleanup
	ts := &testServer{engine: engine, srv: srv, addr: l.Addr().String(), cfg: cfg}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx) //nolint:errcheck // best effort in cleanup
		engine.Close()
	})

	var sqls, want []string
	for i := range 16 {
		sql := fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age > %d", 20+i)
		if i == 5 {
			sql = "DELETE FROM people"
		}
		sqls = append(sqls, sql)
		got, err := engine.NewSession(testAnalyst).Exec(ctx, sql, nil)
		if err != nil {
			want = append(want, "SQLSTATE 25006")
			continue
		}
		want = append(want, got.Text().Values[0][0])
	}
	before, err := engine.AuditLog(ctx, state.AuditFilter{Analyst: testAnalyst})
	if err != nil {
		t.Fatal(err)
	}

	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	hc, err := conn.PgConn().Hijack()
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Conn.Close()
	writes := counted.writes.Load()
	for _, sql := range sqls {
		hc.Frontend.Send(&pgproto3.Query{String: sql})
	}
	if err := hc.Frontend.Flush(); err != nil {
		t.Fatal(err)
	}
	got := answers(t, hc.Frontend, len(sqls))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pipelined answers %v, want %v", got, want)
	}
	// The 16 messages arrive in one segment or two: one write for each.
	if n := counted.writes.Load() - writes; n < 1 || n > 2 {
		t.Errorf("%d writes for 16 pipelined statements", n)
	}
	after, err := engine.AuditLog(ctx, state.AuditFilter{Analyst: testAnalyst})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(after) - len(before); n != len(sqls) {
		t.Errorf("%d statements audited of %d", n, len(sqls))
	}

	// One at a time, each answer leaves on its own.
	writes = counted.writes.Load()
	for _, sql := range sqls[:4] {
		hc.Frontend.Send(&pgproto3.Query{String: sql})
		if err := hc.Frontend.Flush(); err != nil {
			t.Fatal(err)
		}
		answers(t, hc.Frontend, 1)
	}
	if n := counted.writes.Load() - writes; n != 4 {
		t.Errorf("%d writes for 4 statements sent one at a time", n)
	}
}

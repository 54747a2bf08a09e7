package attacks_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"countwall/attacks"
	"countwall/proxy"
	"countwall/proxy/pgwire"
)

// serveWire serves e over the PostgreSQL protocol (trust, a session of e
// per connection) on a loopback TCP port or a Unix socket, until the
// benchmark ends, and returns the DSN that reaches it.
func serveWire(t testing.TB, e *proxy.Engine, transport string) string {
	t.Helper()
	srv := pgwire.New(func(analyst string) pgwire.Session { return e.NewSession(analyst) }, pgwire.Options{Trust: true})
	return startWire(t, srv, transport)
}

// startWire runs srv on a loopback TCP port or a Unix socket until the test
// ends and returns the DSN that reaches it.
func startWire(t testing.TB, srv *pgwire.Server, transport string) string {
	t.Helper()
	var l net.Listener
	var dsn string
	var err error
	switch transport {
	case "tcp":
		l, err = net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			dsn = "postgres://mallory@" + l.Addr().String() + "/countwall?sslmode=disable"
		}
	case "unix":
		// pgx finds a server's socket as PostgreSQL names it: DIR/.s.PGSQL.PORT.
		dir := t.TempDir()
		l, err = net.Listen("unix", filepath.Join(dir, ".s.PGSQL.5432"))
		dsn = fmt.Sprintf("host=%s port=5432 user=mallory database=countwall sslmode=disable", dir)
	default:
		t.Fatalf("unknown transport %q", transport)
	}
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l) //nolint:errcheck // ends with ErrServerClosed at cleanup
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx) //nolint:errcheck // best effort in cleanup
	})
	return dsn
}

// dialWire opens an attack's connection to dsn, closed when the test ends.
func dialWire(t testing.TB, dsn string) *attacks.Wire {
	t.Helper()
	w, err := attacks.Dial(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// BenchmarkWireConnections sends the noise remover's statements over 1 and 4
// connections at once (each its own session of one Engine, as
// idp-reconstruct --parallel opens them), over loopback TCP and a Unix
// socket, with each answer's audit row on disk before it leaves (full) and
// only in the state's log (normal). cpu-ns/op is the whole process's CPU
// (server, Engine and clients) per statement:
//
//	go test ./attacks -run '^$' -bench WireConnections -benchtime 8000x -count 5 | benchstat -
func BenchmarkWireConnections(b *testing.B) {
	stmts := noiseRemoverStatements()
	for _, auditSync := range []string{"full", "normal"} {
		for _, transport := range []string{"tcp", "unix"} {
			for _, conns := range []int{1, 4} {
				b.Run(fmt.Sprintf("audit-%s/%s/conns-%d", auditSync, transport, conns), func(b *testing.B) {
					e, _ := syntheticEngineOpen(b, "cellkey", "ptable: uniform, D: 2, suppress_at: 4", auditSync)
					dsn := serveWire(b, e, transport)
					wires := make([]*attacks.Wire, conns)
					for i := range wires {
						wires[i] = dialWire(b, dsn)
					}
					benchConnections(b, wires, stmts)
				})
			}
		}
	}
}

// benchConnections sends b.N of stmts spread over the connections, each
// connection one statement at a time, and reports the rate and the
// process's CPU time per statement.
func benchConnections(b *testing.B, wires []*attacks.Wire, stmts []string) {
	ctx := context.Background()
	var next sync.Mutex
	sent := 0
	take := func() (string, bool) {
		next.Lock()
		defer next.Unlock()
		if sent == b.N {
			return "", false
		}
		sent++
		return stmts[sent%len(stmts)], true
	}
	b.ResetTimer()
	cpu := startCPU()
	var wg sync.WaitGroup
	for _, w := range wires {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sql, ok := take(); ok; sql, ok = take() {
				if _, err := w.Query(ctx, sql); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	cpu.report(b)
}

package pgwire

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// syncBuffer is a log the server writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(match string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range strings.Split(s.b.String(), "\n") {
		if strings.Contains(l, match) {
			out = append(out, l)
		}
	}
	return out
}

// A login logs one line, naming the analyst and the client's address,
// however many statements follow; a failed one logs its own line with the
// client's address.
func TestConnectionLogNamesTheClient(t *testing.T) {
	var logs syncBuffer
	ts := startServer(t, "exact", nil, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	ctx := context.Background()
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	client := conn.PgConn().Conn().LocalAddr().String()
	for range 3 {
		var n int64
		if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pgx.Connect(ctx, ts.dsn(testAnalyst, "wrong")); err == nil {
		t.Fatal("a wrong password connected")
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(logs.lines("authentication failed")) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	tests := []struct {
		match string
		want  []string // in the one line
	}{
		{"msg=login", []string{"level=INFO", "client=" + client, "analyst=" + testAnalyst, "tls=false"}},
		{`msg="authentication failed"`, []string{"level=WARN", "client=127.0.0.1:", "analyst=" + testAnalyst}},
	}
	for _, tt := range tests {
		lines := logs.lines(tt.match)
		if len(lines) != 1 {
			t.Errorf("%d lines with %s, want 1:\n%s", len(lines), tt.match, strings.Join(lines, "\n"))
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(lines[0], w) {
				t.Errorf("%s line lacks %s: %s", tt.match, w, lines[0])
			}
		}
	}
}

// The client of a TCP connection is its host:port; of a Unix socket,
// "local", as PostgreSQL logs "[local]".
func TestClientAddr(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		addr := "127.0.0.1:0"
		if network == "unix" {
			addr = filepath.Join(t.TempDir(), "s")
		}
		l, err := net.Listen(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		dialled, err := net.Dial(network, l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer dialled.Close()
		accepted, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer accepted.Close()
		want := "local"
		if network == "tcp" {
			want = dialled.LocalAddr().String()
		}
		if got := clientAddr(accepted); got != want {
			t.Errorf("%s: client %q, want %q", network, got, want)
		}
	}
}

package server

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"countwall/config"
)

// With server.socket_dir, serve also answers on DIR/.s.PGSQL.PORT, where a
// PostgreSQL client given host=DIR and the TCP port looks, with the same
// authentication; the socket is gone once serve has stopped.
func TestServeOnAUnixSocket(t *testing.T) {
	path := fixture(t)("cellkey")
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	withSocket := strings.Replace(string(body), "  listen: 127.0.0.1:0\n", "  listen: 127.0.0.1:0\n  socket_dir: "+dir+"\n", 1)
	if err := os.WriteFile(path, []byte(withSocket), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, ServeOptions{Load: func() (*config.Config, error) { return config.Load(path, nil) },
			Logger: slog.New(slog.DiscardHandler), Ready: func(a net.Addr) { ready <- a }})
	}()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-served:
		t.Fatalf("Serve ended before it was ready: %v", err)
	}
	_, port, _ := net.SplitHostPort(addr.String())
	socket := filepath.Join(dir, ".s.PGSQL."+port)
	if fi, err := os.Lstat(socket); err != nil || fi.Mode()&fs.ModeSocket == 0 {
		t.Fatalf("no socket at %s: %v", socket, err)
	}
	for _, tc := range []struct {
		password string
		ok       bool
	}{{"alice-secret", true}, {"wrong", false}} {
		conn, err := pgx.Connect(ctx, "host="+dir+" port="+port+" user=alice password="+tc.password+" database=countwall sslmode=disable")
		if (err == nil) != tc.ok {
			t.Fatalf("password %q through the socket: %v", tc.password, err)
		}
		if err != nil {
			continue
		}
		if got := show(t, conn, "mechanism"); got != "cellkey" {
			t.Errorf("mechanism through the socket = %s, want cellkey", got)
		}
		conn.Close(ctx)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
	if _, err := os.Lstat(socket); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the socket is still there after serve stopped: %v", err)
	}
}

// A socket left by a server that did not close it is removed before
// listening; a file that is not a socket, or a socket a server still
// accepts on, is left alone and refused.
func TestRemoveStaleSocket(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	live := filepath.Join(dir, "live")
	l, err = net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path              string
		wantErr, wantKept bool
	}{
		{filepath.Join(dir, "none"), false, false},
		{stale, false, false},
		{live, true, true},
		{plain, true, true},
	} {
		err := removeStaleSocket(tc.path)
		_, statErr := os.Lstat(tc.path)
		if (err != nil) != tc.wantErr || (statErr == nil) != tc.wantKept {
			t.Errorf("%s: error %v, still there %v", filepath.Base(tc.path), err, statErr == nil)
		}
	}
}

package server

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"countwall/config"
	"countwall/dataset"
	"countwall/pgerror"
	"countwall/proxy"
	"countwall/proxy/pgwire"
)

const testRows = 300

// fixture writes a people table and returns a function writing a config
// for it under a mechanism, with analyst alice (password alice-secret).
func fixture(t *testing.T) (writeConfig func(mechanism string) string) {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "people.db")
	if err := dataset.GeneratePeople(context.Background(), db, dataset.PeopleOptions{Rows: testRows, Seed: 1}, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	verifier, err := pgwire.NewVerifier("alice-secret", 4096)
	if err != nil {
		t.Fatal(err)
	}
	return func(mechanism string) string {
		t.Helper()
		path := filepath.Join(dir, "countwall-"+mechanism+".yaml")
		body := "database: " + db + "\nstate: " + filepath.Join(dir, "state.db") + "\nmechanism:\n  name: " + mechanism +
			"\nserver:\n  listen: 127.0.0.1:0\nanalysts:\n  alice: {password: \"" + verifier + "\"}\n" + dataset.PeopleTable().ConfigSnippet()
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

func dial(t *testing.T, addr, user, password string) (*pgx.Conn, error) {
	t.Helper()
	dsn := (&url.URL{Scheme: "postgres", User: url.UserPassword(user, password), Host: addr, Path: "/countwall", RawQuery: "sslmode=disable"}).String()
	return pgx.Connect(context.Background(), dsn)
}

func show(t *testing.T, conn *pgx.Conn, what string) string {
	t.Helper()
	var v string
	if err := conn.QueryRow(context.Background(), "SHOW "+what).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A loopback firewall lets in the analysts of the config with their
// passwords, and no one else, and answers through the engine.
func TestLoopback(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Load(fixture(t)("exact"), nil)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := proxy.Open(ctx, cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := StartLoopback(engine)
	if err != nil {
		engine.Close()
		t.Fatal(err)
	}
	defer lb.Stop()
	if host, _, _ := net.SplitHostPort(lb.Addr); host != "127.0.0.1" {
		t.Errorf("listening on %s, want loopback", lb.Addr)
	}

	for _, tc := range []struct{ user, password string }{{"alice", "wrong"}, {"mallory", "alice-secret"}} {
		if conn, err := dial(t, lb.Addr, tc.user, tc.password); err == nil {
			conn.Close(ctx)
			t.Errorf("%s with password %q got in", tc.user, tc.password)
		} else if got := pgerror.SQLState(err); got != pgerror.InvalidPassword {
			t.Errorf("%s: SQLSTATE %q, want %s (%v)", tc.user, got, pgerror.InvalidPassword, err)
		}
	}
	conn, err := dial(t, lb.Addr, "alice", "alice-secret")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people").Scan(&n); err != nil || n != testRows {
		t.Errorf("COUNT(*) = %d, %v; want %d", n, err, testRows)
	}
}

func TestNewRefusesMissingCertificate(t *testing.T) {
	cfg, err := config.Load(fixture(t)("exact"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server.TLSCert, cfg.Server.TLSKey = "/nonexistent/cert.pem", "/nonexistent/key.pem"
	engine, err := proxy.Open(context.Background(), cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	if _, err := New(engine, nil); err == nil || !strings.HasPrefix(err.Error(), "server.tls_cert: ") {
		t.Errorf("New = %v, want a server.tls_cert error", err)
	}
}

// lockedBuffer is a log sink the server's goroutines may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Serve reloads on a signal (sessions see the new mechanism, a config that
// fails to load leaves the old one in force) and returns once its context
// is cancelled.
func TestServeReloadsAndStops(t *testing.T) {
	write := fixture(t)
	paths := map[string]string{"cellkey": write("cellkey"), "suppress": write("suppress")}
	var mu sync.Mutex
	current := paths["cellkey"]
	load := func() (*config.Config, error) {
		mu.Lock()
		defer mu.Unlock()
		return config.Load(current, nil)
	}
	use := func(path string) {
		mu.Lock()
		current = path
		mu.Unlock()
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reload := make(chan os.Signal) // unbuffered: a second send returns only once the first reload is done
	ready := make(chan net.Addr, 1)
	var logs lockedBuffer
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, ServeOptions{Load: load, Reload: reload, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			Ready: func(a net.Addr) { ready <- a }})
	}()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-served:
		t.Fatalf("Serve ended before it was ready: %v", err)
	}
	// The tables were read into memory before connections were accepted.
	readyAt, serving := strings.Index(logs.String(), "msg=\"tables ready\""), strings.Index(logs.String(), "msg=\"countwall serving\"")
	if inMemory := strings.Index(logs.String(), "msg=\"table in memory\""); readyAt < 0 || inMemory < 0 || inMemory > readyAt || serving < readyAt {
		t.Errorf("want \"table in memory\", then \"tables ready\", then \"countwall serving\" in the log:\n%s", logs.String())
	}
	conn, err := dial(t, addr.String(), "alice", "alice-secret")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if got := show(t, conn, "mechanism"); got != "cellkey" {
		t.Fatalf("mechanism = %s, want cellkey", got)
	}

	reloadNow := func() {
		reload <- syscall.SIGHUP
		reload <- syscall.SIGHUP // returns after the first reload has finished
	}
	use(paths["suppress"])
	reloadNow()
	if got := show(t, conn, "mechanism"); got != "suppress" {
		t.Errorf("after reload, mechanism = %s, want suppress", got)
	}
	if strings.Contains(logs.String(), "config change not applied") {
		t.Errorf("a reload that changes the mechanism only warned of a change not applied:\n%s", logs.String())
	}
	use(filepath.Join(t.TempDir(), "missing.yaml"))
	reloadNow()
	if got := show(t, conn, "mechanism"); got != "suppress" {
		t.Errorf("after a failed reload, mechanism = %s, want suppress still", got)
	}
	if n := strings.Count(logs.String(), "config reload refused"); n != 2 {
		t.Errorf("%d refusals logged, want 2 (one per signal):\n%s", n, logs.String())
	}

	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
	if !strings.Contains(logs.String(), "shutting down") {
		t.Errorf("the shutdown was not logged:\n%s", logs.String())
	}
}

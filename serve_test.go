package main

import (
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// freePort finds a loopback port for the server to listen on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startServe runs `countwall serve` with args, its output in logs, until
// stop interrupts it and waits for it to end.
func startServe(t *testing.T, args ...string) (logs *strings.Builder, stop func()) {
	t.Helper()
	cmd := exec.Command(countwallBinary(t), append([]string{"serve"}, args...)...)
	logs = &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return logs, func() {
		cmd.Process.Signal(os.Interrupt) //nolint:errcheck // the wait below reports
		cmd.Wait()                       //nolint:errcheck // exit status after SIGINT is not the point
	}
}

// TestServeReloadsEditedConfig runs `countwall serve`, edits the config's
// mechanism under an open session, then breaks the config: the session sees
// the new mechanism on its next query, and the broken config is refused with
// the old one left in force.
func TestServeReloadsEditedConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("runs countwall serve from the built binary and waits on its reloads: skipped under -short; go test ./... runs it")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "demo.db")
	if out, err := run(t, "", "gen", "people", "--rows", "2000", "--out", db); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	example, err := os.ReadFile("examples/countwall.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "countwall.yaml")
	write := func(body string) {
		t.Helper()
		tmp := cfgPath + ".tmp"
		if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfgPath); err != nil {
			t.Fatal(err)
		}
	}
	write(string(example))
	addr := freePort(t)
	logs, stop := startServe(t, "--config", cfgPath, "--server.listen", addr)
	defer stop()

	dsn := (&url.URL{Scheme: "postgres", User: url.UserPassword("alice", "alice-secret"), Host: addr, Path: "/countwall", RawQuery: "sslmode=disable"}).String()
	var conn *pgx.Conn
	for deadline := time.Now().Add(10 * time.Second); ; {
		conn, err = pgx.Connect(context.Background(), dsn)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not come up: %v\n%s", err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer conn.Close(context.Background())
	mechanism := func() string {
		var m string
		if err := conn.QueryRow(context.Background(), "SHOW mechanism").Scan(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	waitFor := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if mechanism() == want {
				return
			}
		}
		t.Fatalf("mechanism is %s, want %s\n%s", mechanism(), want, logs.String())
	}
	if got := mechanism(); got != "cellkey" {
		t.Fatalf("mechanism = %s, want cellkey", got)
	}
	write(strings.Replace(string(example), "  name: cellkey", "  name: suppress", 1))
	waitFor("suppress")

	write(strings.Replace(string(example), "  name: cellkey", "  name: no-such-mechanism", 1))
	time.Sleep(time.Second) // give the watcher time to see and refuse it
	if got := mechanism(); got != "suppress" {
		t.Errorf("after a broken config, mechanism = %s, want suppress still", got)
	}
	if !strings.Contains(logs.String(), "config reload refused") {
		t.Errorf("the refusal was not logged:\n%s", logs.String())
	}
	// One edit, one reload, one line in the log.
	if n := strings.Count(logs.String(), `msg="config reloaded"`); n != 1 {
		t.Errorf("one reload was logged %d times:\n%s", n, logs.String())
	}
}

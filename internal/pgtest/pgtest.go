// Package pgtest starts a real PostgreSQL server for tests: initdb into a
// temporary directory as an unprivileged user, a free port on 127.0.0.1,
// stopped by Stop at the end of the test binary. One server is shared by
// every test of a package; each test gets a database of its own.
//
// A test that needs the server calls Server(t); when no PostgreSQL binaries
// are installed it is skipped with a message naming what is missing, and
// under go test -short it is skipped before anything starts (a server costs
// seconds per package; go test ./... runs these tests). A package using it
// calls Stop from its TestMain after m.Run.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// superuser is the role initdb creates; connections from 127.0.0.1 are
// trusted, so tests need no password.
const superuser = "countwall"

// Srv is a running PostgreSQL server.
type Srv struct {
	Port int
	dir  string   // data directory and socket directory live under it
	run  []string // prefix that runs a command as the server's owner
	bin  string
	dbs  atomic.Int64
}

var (
	once     sync.Once
	shared   *Srv
	startErr error
	skipWhy  string
)

// Server returns the package's shared server, starting it on first use. It
// skips t under -short or when no PostgreSQL binaries are present, and fails
// it when they are but the server cannot start.
func Server(t testing.TB) *Srv {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real PostgreSQL server: skipped under -short; go test ./... runs it")
	}
	once.Do(func() { shared, skipWhy, startErr = start() })
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	if startErr != nil {
		t.Fatalf("starting PostgreSQL for the tests: %v", startErr)
	}
	return shared
}

// Stop stops the shared server, if one was started, and removes its files.
func Stop() {
	if shared == nil {
		return
	}
	shared.stop()
	shared = nil
}

// BinDir finds the PostgreSQL server binaries: $COUNTWALL_PG_BIN, then
// Debian's /usr/lib/postgresql/<version>/bin (newest first), then PATH.
func BinDir() (string, bool) {
	if d := os.Getenv("COUNTWALL_PG_BIN"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, true
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, true
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), true
	}
	return "", false
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func start() (*Srv, string, error) {
	bin, ok := BinDir()
	if !ok {
		return nil, "no PostgreSQL server binaries (initdb) found: install Debian's postgresql package (.ci/run does) or set COUNTWALL_PG_BIN", nil
	}
	s := &Srv{bin: bin}
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: the server runs as an unprivileged
		// system user.
		owner := ""
		for _, name := range []string{"postgres", "nobody"} {
			if _, err := user.Lookup(name); err == nil {
				owner = name
				break
			}
		}
		runuser, err := exec.LookPath("runuser")
		if owner == "" || err != nil {
			return nil, "running as root, and no unprivileged user (postgres, nobody) or runuser to run PostgreSQL as", nil
		}
		s.run = []string{runuser, "-u", owner, "--"}
		dir, err := os.MkdirTemp("", "countwall-pg-")
		if err != nil {
			return nil, "", err
		}
		s.dir = dir
		u, _ := user.Lookup(owner)
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, "", fmt.Errorf("handing %s to %s: %w", dir, owner, err)
		}
	} else {
		dir, err := os.MkdirTemp("", "countwall-pg-")
		if err != nil {
			return nil, "", err
		}
		s.dir = dir
	}
	if err := s.init(); err != nil {
		s.stop()
		return nil, "", err
	}
	return s, "", nil
}

func (s *Srv) cmd(name string, args ...string) *exec.Cmd {
	full := append(append(append([]string{}, s.run...), filepath.Join(s.bin, name)), args...)
	return exec.Command(full[0], full[1:]...)
}

func (s *Srv) data() string { return filepath.Join(s.dir, "data") }

func (s *Srv) init() error {
	out, err := s.cmd("initdb", "-D", s.data(), "-U", superuser, "--auth=trust",
		"-E", "UTF8", "--locale=C.UTF-8", "--no-sync").CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	// A free port: the kernel picks one, the listener closes, the server
	// takes it. Another process could take it in between; start says so.
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s -c fsync=off -c max_connections=200", port, s.dir)
		out, err = s.cmd("pg_ctl", "-D", s.data(), "-o", opts, "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "start").CombinedOutput()
		if err == nil {
			s.Port = port
			return nil
		}
		if attempt == 2 {
			log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
			return fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, log)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Srv) stop() {
	if s.Port != 0 {
		_ = s.cmd("pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "stop").Run()
	}
	os.RemoveAll(s.dir)
}

// URL is the connection URL of database db as the superuser.
func (s *Srv) URL(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", superuser, s.Port, db)
}

// NewDatabase creates an empty database for one test and returns its URL.
// It is dropped when the test ends.
func (s *Srv) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("cw_test_%d_%d", os.Getpid(), s.dbs.Add(1))
	if err := s.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("creating database %s: %v", name, err)
	}
	t.Cleanup(func() { _ = s.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	return s.URL(name)
}

// Exec runs statements in the postgres database as the superuser.
func (s *Srv) Exec(stmts ...string) error {
	return ExecURL(s.URL("postgres"), stmts...)
}

// ExecURL runs statements, in order, against the database at url.
func ExecURL(url string, stmts ...string) error {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	for _, st := range stmts {
		if _, err := db.ExecContext(ctx, st); err != nil {
			errs = append(errs, fmt.Errorf("%.60s: %w", st, err))
			break
		}
	}
	return errors.Join(errs...)
}

// StatePath is where a test keeps a state database: a fresh PostgreSQL
// database's URL on srv, or, with a nil srv, a SQLite file in the test's
// directory. Packages that run their tests against both backends set srv
// for the PostgreSQL run.
func StatePath(t testing.TB, srv *Srv) string {
	t.Helper()
	if srv != nil {
		return srv.NewDatabase(t)
	}
	return filepath.Join(t.TempDir(), "state.db")
}

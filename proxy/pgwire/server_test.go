package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/config"
	"countwall/dataset"
	"countwall/internal/pgtest"
	"countwall/pgerror"
	"countwall/proxy"
)

const (
	testAnalyst  = "alice"
	testPassword = "correct horse"
)

// testServer is a real engine behind a wire server on a loopback port.
type testServer struct {
	engine *proxy.Engine
	srv    *Server
	addr   string
	cfg    *config.Config
}

var (
	// fixtureDir holds what the package's tests share; TestMain removes it.
	fixtureDir  string
	fixtureOnce sync.Once
	fixtureDB   string
	fixtureErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "countwall-pgwire-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureDir = dir
	code := m.Run()
	pgtest.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sharedDatabase generates one protected people table for the package, in
// the directory TestMain removes: a table per test would cost more than the
// tests, and t.TempDir would remove it after the first.
func sharedDatabase(t testing.TB) string {
	fixtureOnce.Do(func() {
		fixtureDB = filepath.Join(fixtureDir, "people.db")
		fixtureErr = dataset.GeneratePeople(context.Background(), fixtureDB, dataset.PeopleOptions{Rows: 5000, Seed: 7}, dataset.WriteOptions{})
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixtureDB
}

func loadConfig(t testing.TB, dir, mechanism string, opts map[string]string) *config.Config {
	t.Helper()
	verifier, err := NewVerifier(testPassword, 4096)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`database: %s
state: %s
mechanism:
  name: %s
mechanisms:
  cellkey: {ptable: uniform, D: 2, suppress_at: 4}
budget:
  epsilon_cap: 0.5
analysts:
  %s:
    password: %q
server:
  query_timeout: %s
tables:
  people:
    privacy_unit: id
    domains:
      sex: [F, M]
      age: {min: 0, max: 100}
`, sharedDatabase(t), filepath.Join(dir, "state.db"), mechanism, testAnalyst, verifier, valueOr(opts["query_timeout"], "10s"))
	path := filepath.Join(dir, "countwall.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func valueOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// startServer serves a real engine; hooks adjust the server before it
// starts accepting.
func startServer(t testing.TB, mechanism string, opts map[string]string, tweak func(*Options), hooks ...func(*Server)) *testServer {
	t.Helper()
	dir := t.TempDir()
	cfg := loadConfig(t, dir, mechanism, opts)
	engine, err := proxy.Open(context.Background(), cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		Verifier: func(a string) (string, bool) {
			an, ok := engine.Config().Analysts[a]
			return an.Password, ok
		},
		QueryTimeout: cfg.Server.QueryTimeout,
		IdleTimeout:  time.Minute,
	}
	if tweak != nil {
		tweak(&o)
	}
	srv := New(func(a string) Session { return engine.NewSession(a) }, o)
	for _, hook := range hooks {
		hook(srv)
	}
	return listenForTest(t, engine, srv, cfg)
}

func (ts *testServer) dsn(user, password string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(user, password), Host: ts.addr, Path: "/countwall", RawQuery: "sslmode=disable"}
	return u.String()
}

func (ts *testServer) connect(t testing.TB, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(ts.dsn(testAnalyst, testPassword))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

var modes = []struct {
	name string
	mode pgx.QueryExecMode
}{
	{"simple", pgx.QueryExecModeSimpleProtocol},
	{"extended", pgx.QueryExecModeCacheStatement},
	{"extended-describe", pgx.QueryExecModeDescribeExec},
}

// withheld stands for a withheld count (NULL) in the counts the tests
// compare.
const withheld = -1

// inProcess answers a query through the engine directly: its counts, a
// withheld one as withheld.
func (ts *testServer) inProcess(t testing.TB, sql string) []int64 {
	t.Helper()
	res, err := ts.engine.Query(context.Background(), testAnalyst, sql)
	if err != nil {
		t.Fatalf("in process %q: %v", sql, err)
	}
	out := make([]int64, len(res.Rows))
	for i, r := range res.Rows {
		out[i] = r[len(r)-1].Int
		if r[len(r)-1].Null {
			out[i] = withheld
		}
	}
	return out
}

// wireCount is a count scanned from the wire, a NULL as withheld.
func wireCount(n *int64) int64 {
	if n == nil {
		return withheld
	}
	return *n
}

func TestQueriesOverBothProtocols(t *testing.T) {
	ts := startServer(t, "cellkey", nil, nil)
	ctx := context.Background()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			var n *int64
			if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people WHERE age > 40").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if want := ts.inProcess(t, "SELECT COUNT(*) FROM people WHERE age > 40")[0]; wireCount(n) != want {
				t.Errorf("count = %d, in process %d", wireCount(n), want)
			}
			// Parameters: $1 becomes an integer literal, $2 a text literal.
			if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people WHERE age > $1 AND sex = $2", 40, "F").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if want := ts.inProcess(t, "SELECT COUNT(*) FROM people WHERE age > 40 AND sex = 'F'")[0]; wireCount(n) != want {
				t.Errorf("parameterised count = %d, in process %d", wireCount(n), want)
			}
			// A parameter carrying SQL is only ever a value: no row, and
			// cellkey withholds the 0.
			if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people WHERE suburb = $1", "x' OR '1'='1").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if wireCount(n) != withheld {
				t.Errorf("injection attempt counted %d rows", wireCount(n))
			}
			rows, err := conn.Query(ctx, "SELECT sex, COUNT(*) AS n FROM people GROUP BY sex ORDER BY sex")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var sex string
				var c int64
				if err := rows.Scan(&sex, &c); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s=%d", sex, c))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			want := ts.inProcess(t, "SELECT sex, COUNT(*) AS n FROM people GROUP BY sex ORDER BY sex")
			if fmt.Sprint(got) != fmt.Sprintf("[F=%d M=%d]", want[0], want[1]) {
				t.Errorf("group by = %v, in process %v", got, want)
			}
			var version string
			if err := conn.QueryRow(ctx, "SELECT version()").Scan(&version); err != nil || !strings.Contains(version, "countwall") {
				t.Errorf("version() = %q, %v", version, err)
			}
		})
	}
}

func TestErrorClassesOverTheWire(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	tests := []struct {
		sql  string
		args []any
		code string
	}{
		{"SELEC COUNT(*) FROM people", nil, "42601"},
		{"SELECT * FROM people", nil, "0A000"},
		{"SELECT COUNT(*) FROM nosuch", nil, "42P01"},
		{"SELECT COUNT(*) FROM people WHERE height = 1", nil, "42703"},
		{"SELECT COUNT(*) FROM people WHERE age = 'old'", nil, "22P02"},
		{"SELECT COUNT(*) FROM people WHERE suburb = 3", nil, "42883"},
		{"SELECT COUNT(*) FROM people WHERE id = 3", nil, "42501"},
		{"SELECT age, COUNT(*) FROM people", nil, "42803"},
		{"DELETE FROM people", nil, "25006"},
		{"SELECT COUNT(*) FROM people WHERE suburb = '" + strings.Repeat("y", 9000) + "'", nil, "54000"},
		{"SET epsilon = 99", nil, "22023"},
		{"SET nosuch = 1", nil, "42704"},
		{"SELECT COUNT(*) FROM people WHERE age > $1", []any{"old"}, "22P02"},
	}
	for _, m := range modes {
		conn := ts.connect(t, m.mode)
		for _, tc := range tests {
			if tc.args != nil && m.mode != pgx.QueryExecModeSimpleProtocol {
				// pgx encodes a Go string for an int8 parameter itself; send
				// the text as is so that the server does the checking.
				tc.args = []any{pgtypeText(tc.args[0].(string))}
			}
			code := tc.code
			if tc.args != nil && m.mode == pgx.QueryExecModeSimpleProtocol {
				// pgx interpolates the value client-side: the server sees the
				// literal 'old' compared with an integer column.
				code = "22P02"
			}
			_, err := conn.Exec(context.Background(), tc.sql, tc.args...)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != code {
				t.Errorf("%s: %.60s: error %v, want SQLSTATE %s", m.name, tc.sql, err, code)
			}
		}
		// The connection is still usable after every error.
		var n int64
		if err := conn.QueryRow(context.Background(), "SELECT COUNT(*) FROM people").Scan(&n); err != nil || n != 5000 {
			t.Errorf("%s: after errors, count = %d, %v", m.name, n, err)
		}
	}
}

// pgtypeText sends a string parameter with the text type whatever the
// server described.
type pgtypeText string

func (s pgtypeText) EncodeText() string { return string(s) }

func TestAuthentication(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	for _, tc := range []struct{ user, password string }{
		{testAnalyst, "wrong"},
		{"mallory", testPassword},
	} {
		_, err := pgx.Connect(context.Background(), ts.dsn(tc.user, tc.password))
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
			t.Errorf("user %s: error %v, want 28P01", tc.user, err)
		}
	}
	// Trust is refused on a listener that is not loopback.
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv := New(func(string) Session { return nil }, Options{Trust: true})
	if err := srv.Serve(l); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("trust on 0.0.0.0: %v, want a refusal", err)
	}
}

func TestStatementTimeout(t *testing.T) {
	ts := startServer(t, "cellkey", nil, func(o *Options) { o.QueryTimeout = time.Nanosecond })
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	_, err := conn.Exec(context.Background(), "SELECT age, COUNT(*) FROM people GROUP BY age")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" || pgErr.Message != "canceling statement due to statement timeout" {
		t.Fatalf("error %v, want 57014 for the statement timeout", err)
	}
}

func TestBudgetNoticeAndShowBudget(t *testing.T) {
	ts := startServer(t, "laplace", nil, nil)
	cfg, err := pgx.ParseConfig(ts.dsn(testAnalyst, testPassword))
	if err != nil {
		t.Fatal(err)
	}
	var notices []string
	var mu sync.Mutex
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		notices = append(notices, n.Message)
		mu.Unlock()
	}
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	ctx := context.Background()
	answered := 0
	var last error
	for i := 0; i < 7; i++ {
		if _, err := conn.Exec(ctx, "SELECT COUNT(*) FROM people"); err != nil {
			last = err
			break
		}
		answered++
	}
	// Cap 0.5 at the default epsilon 0.1: five answers, then 53400.
	var pgErr *pgconn.PgError
	if answered != 5 || !errors.As(last, &pgErr) || pgErr.Code != "53400" {
		t.Fatalf("answered %d, last error %v; want 5 then 53400", answered, last)
	}
	mu.Lock()
	if len(notices) != 5 || !strings.Contains(notices[0], "charged epsilon 0.1 (dp)") {
		t.Errorf("notices = %q", notices)
	}
	mu.Unlock()
	var kind string
	var spent, remaining, dspent, dremaining, rho float64
	if err := conn.QueryRow(ctx, "SHOW budget").Scan(&kind, &spent, &remaining, &dspent, &dremaining, &rho); err != nil {
		t.Fatal(err)
	}
	if kind != "dp" || spent < 0.5-1e-9 || remaining > 1e-9 {
		t.Errorf("SHOW budget first row = %s %g %g", kind, spent, remaining)
	}
}

func TestConcurrentClientsMatchInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("scale: 16 clients of 200 queries each: skipped under -short; go test ./... runs it")
	}
	ts := startServer(t, "cellkey", nil, func(o *Options) { o.MaxConnections = 32 })
	want := map[int]int64{}
	for age := 0; age < 100; age++ {
		want[age] = ts.inProcess(t, fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age = %d", age))[0]
	}
	const clients, perClient = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	conns := make([]*pgx.Conn, clients)
	for c := range conns {
		conns[c] = ts.connect(t, modes[c%len(modes)].mode)
	}
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conn := conns[c]
			for i := 0; i < perClient; i++ {
				age := (c*perClient + i) % 100
				var n *int64
				if err := conn.QueryRow(context.Background(), "SELECT COUNT(*) FROM people WHERE age = $1", age).Scan(&n); err != nil {
					errs <- fmt.Errorf("client %d query %d: %w", c, i, err)
					return
				}
				if wireCount(n) != want[age] {
					errs <- fmt.Errorf("client %d: age %d answered %d, in process %d", c, age, wireCount(n), want[age])
					return
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLiveReloadKeepsSessions(t *testing.T) {
	ts := startServer(t, "cellkey", nil, nil)
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := context.Background()
	mechanism := func() string {
		var m string
		if err := conn.QueryRow(ctx, "SHOW mechanism").Scan(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if got := mechanism(); got != "cellkey" {
		t.Fatalf("mechanism = %s", got)
	}
	next := *ts.cfg
	next.Mechanism = config.Mechanism{Name: "exact"}
	if err := ts.engine.Reload(ctx, &next); err != nil {
		t.Fatal(err)
	}
	if got := mechanism(); got != "exact" {
		t.Errorf("after reload, the open session answers with %s", got)
	}
	broken := next
	broken.Mechanism = config.Mechanism{Name: "cellkey", Params: map[string]any{"d": -3}}
	if err := ts.engine.Reload(ctx, &broken); err == nil {
		t.Error("a broken mechanism config was accepted")
	}
	if got := mechanism(); got != "exact" {
		t.Errorf("after a refused reload, mechanism = %s, want exact", got)
	}
}

func TestShutdownFinishesAndCloses(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if _, err := conn.Exec(context.Background(), "SELECT COUNT(*) FROM people"); err == nil {
		t.Error("a connection survived shutdown")
	}
}

// TestPsql drives the real psql binary: a password login, counts, a GROUP
// BY, a refusal and SHOW budget. psql is required in CI (.ci/run installs it).
func TestPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("psql is not installed; .ci/run installs postgresql-client")
		}
		t.Skip("psql is not installed (apt-get install postgresql-client)")
	}
	ts := startServer(t, "exact", nil, nil)
	host, port, _ := net.SplitHostPort(ts.addr)
	run := func(sql string) (string, error) {
		cmd := exec.Command(psql, "-X", "-h", host, "-p", port, "-U", testAnalyst, "-d", "countwall", "-c", sql)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword, "PGCONNECT_TIMEOUT=5")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	tests := []struct {
		sql      string
		want     []string
		wantFail bool
	}{
		{"SELECT COUNT(*) FROM people", []string{"count", "5000", "(1 row)"}, false},
		{"SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex", []string{" F ", " M ", "(2 rows)"}, false},
		{"SELECT * FROM people", []string{"ERROR:  SELECT * is not supported"}, true},
		{"SHOW budget", []string{"epsilon_spent", "dp", "idp", "bdp", "(3 rows)"}, false},
		{`\d`, []string{" public | people | table | countwall"}, false},
		{`SELECT COUNT(*) FROM pg_authid`, []string{"catalog query not supported: no such table: pg_authid"}, true},
	}
	for _, tc := range tests {
		out, err := run(tc.sql)
		if (err != nil) != tc.wantFail {
			t.Errorf("psql -c %q: err %v, output:\n%s", tc.sql, err, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("psql -c %q: output lacks %q:\n%s", tc.sql, w, out)
			}
		}
	}
	want := ts.inProcess(t, "SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex")
	out, _ := run("SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex")
	if !strings.Contains(out, fmt.Sprint(want[0])) || !strings.Contains(out, fmt.Sprint(want[1])) {
		t.Errorf("psql GROUP BY output %q lacks %v", out, want)
	}
}

func TestConnectionLimitAndIdleTimeout(t *testing.T) {
	ts := startServer(t, "exact", nil, func(o *Options) {
		o.MaxConnections = 1
		o.IdleTimeout = 200 * time.Millisecond
	})
	first := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	_, err := pgx.Connect(context.Background(), ts.dsn(testAnalyst, testPassword))
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "53300" {
		t.Errorf("second connection: %v, want 53300", err)
	}
	// Wait for the server to end the idle connection rather than sleeping
	// for a guessed time: it says why (57P05), then closes.
	raw := first.PgConn().Conn()
	raw.SetReadDeadline(time.Now().Add(hangGuard))
	msg, err := pgproto3.NewFrontend(raw, raw).Receive()
	if er, ok := msg.(*pgproto3.ErrorResponse); err != nil || !ok || er.Code != "57P05" {
		t.Errorf("an idle connection got %+v, %v; want the 57P05 idle-session timeout", msg, err)
	}
	// The server closes the socket last, once the session's slot is free.
	if _, err := io.ReadAll(raw); err != nil {
		t.Errorf("waiting for the idle connection to close: %v", err)
	}
	// Its slot is free again.
	second, err := pgx.Connect(context.Background(), ts.dsn(testAnalyst, testPassword))
	if err != nil {
		t.Fatalf("connecting after the idle one closed: %v", err)
	}
	second.Close(context.Background())
}

// blockingSession runs every statement until its context is cancelled, so
// that a CancelRequest is the only way it ends. It says on running when a
// statement has started, so that the cancel is sent only then; if no
// cancel comes it gives up after hangGuard with an error the test rejects.
type blockingSession struct {
	echoSession
	running chan<- struct{}
}

func (s blockingSession) Execute(ctx context.Context, st *proxy.Statement, args []*string) (*proxy.Result, error) {
	s.running <- struct{}{}
	select {
	case <-ctx.Done():
		return nil, pgerror.Errorf(pgerror.QueryCanceled, "canceling statement due to user request")
	case <-time.After(hangGuard):
		return nil, pgerror.Errorf(pgerror.InternalError, "the statement was never cancelled")
	}
}

func TestCancelRequestStopsTheRunningStatement(t *testing.T) {
	running := make(chan struct{}, 1)
	srv := New(func(string) Session { return blockingSession{running: running} }, Options{Trust: true})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l) //nolint:errcheck // ends with ErrServerClosed
	defer srv.Shutdown(context.Background())
	conn, err := pgconn.Connect(context.Background(), "postgres://alice@"+l.Addr().String()+"/countwall?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	go func() {
		<-running
		conn.CancelRequest(context.Background()) //nolint:errcheck // the query's error is what is checked
	}()
	_, err = conn.Exec(context.Background(), "SELECT COUNT(*) FROM people").ReadAll()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("error %v, want 57014 from the cancel", err)
	}
}

// listenForTest serves srv on a loopback port until the test ends, then
// shuts it down and closes its engine.
// serveConfigForTest writes body as dir's config and serves the firewall
// it deploys on a loopback port.
func serveConfigForTest(t testing.TB, dir, body string) *testServer {
	t.Helper()
	cfgPath := filepath.Join(dir, "countwall.yaml")
	if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := proxy.Open(context.Background(), cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(func(a string) Session { return engine.NewSession(a) }, Options{
		Verifier: func(a string) (string, bool) {
			an, ok := engine.Config().Analysts[a]
			return an.Password, ok
		},
		QueryTimeout: 10 * time.Second,
		IdleTimeout:  time.Minute,
	})
	return listenForTest(t, engine, srv, cfg)
}

func listenForTest(t testing.TB, engine *proxy.Engine, srv *Server, cfg *config.Config) *testServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l) //nolint:errcheck // ends with ErrServerClosed at cleanup
	ts := &testServer{engine: engine, srv: srv, addr: l.Addr().String(), cfg: cfg}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx) //nolint:errcheck // best effort in cleanup
		engine.Close()
	})
	return ts
}

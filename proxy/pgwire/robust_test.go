package pgwire

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"countwall/proxy"
)

// panickySession stands for an engine with a bug on one statement.
type panickySession struct{ echoSession }

func (panickySession) Execute(ctx context.Context, st *proxy.Statement, args []*string) (*proxy.Result, error) {
	if st.SQL == "boom" {
		panic("engine bug")
	}
	return echoSession{}.Execute(ctx, st, args)
}

func (panickySession) Describe(ctx context.Context, st *proxy.Statement) (*proxy.Description, error) {
	if st.SQL == "boom" {
		panic("engine bug")
	}
	return echoSession{}.Describe(ctx, st)
}

// startFake serves session to every client with trust authentication;
// hooks adjust the server before it starts accepting.
func startFake(t *testing.T, session Session, hooks ...func(*Server)) (*Server, string) {
	t.Helper()
	srv := New(func(string) Session { return session }, Options{Trust: true})
	for _, hook := range hooks {
		hook(srv)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l) //nolint:errcheck // ends with ErrServerClosed at cleanup
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx) //nolint:errcheck // best effort in cleanup
	})
	return srv, "postgres://alice@" + l.Addr().String() + "/countwall?sslmode=disable"
}

// An engine panic fails that statement with XX000 and a generic message;
// the connection and the server carry on.
func TestEnginePanicFailsOnlyTheStatement(t *testing.T) {
	_, dsn := startFake(t, panickySession{})
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	ctx := context.Background()
	_, simpleErr := conn.Exec(ctx, "boom").ReadAll()
	extendedErr := conn.ExecParams(ctx, "boom", nil, nil, nil, nil).Read().Err
	for name, err := range map[string]error{"simple": simpleErr, "extended": extendedErr} {
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "XX000" || pgErr.Message != errPanicked.Message {
			t.Errorf("%s: error %v, want XX000 with the generic message", name, err)
		}
	}
	res, err := conn.Exec(ctx, "SELECT COUNT(*) FROM people").ReadAll()
	if err != nil || len(res) != 1 || string(res[0].Rows[0][0]) != "0" {
		t.Errorf("after the panics: %v, %v", res, err)
	}
}

// A client that connects and never sends its startup message does not hold
// up Shutdown.
func TestShutdownDoesNotWaitForSilentClients(t *testing.T) {
	tracked := make(chan net.Conn, 1)
	srv, dsn := startFake(t, echoSession{}, func(s *Server) { s.onTrack = func(nc net.Conn) { tracked <- nc } })
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	silent, err := net.Dial("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	<-tracked // the server holds it: Shutdown has it to close
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a silent client: %v after %v", err, time.Since(start))
	}
}

// Decoy salts for unknown analysts are stable within a server, so that a
// repeated probe looks like a real account, but not computable by a client:
// two servers give different ones.
func TestDecoySaltsAreSecret(t *testing.T) {
	a, b := New(nil, Options{}), New(nil, Options{})
	first, again := decoyCredentials(a.decoyKey, "mallory"), decoyCredentials(a.decoyKey, "mallory")
	other := decoyCredentials(b.decoyKey, "mallory")
	if first.Salt != again.Salt {
		t.Error("one server gave two decoy salts for the same name")
	}
	if first.Salt == other.Salt {
		t.Error("two servers gave the same decoy salt: it is computable without the secret")
	}
}

// A panic outside the engine calls (here, opening the session) closes that
// connection only; the server goes on serving the next client.
func TestPanicServingOneConnectionKeepsServing(t *testing.T) {
	var opened atomic.Int32
	sessions := func(string) Session {
		if opened.Add(1) == 1 {
			panic("session factory bug")
		}
		return echoSession{}
	}
	srv := New(sessions, Options{Trust: true})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l) //nolint:errcheck // ends with ErrServerClosed
	defer srv.Shutdown(context.Background())
	dsn := "postgres://alice@" + l.Addr().String() + "/countwall?sslmode=disable&connect_timeout=10"
	if conn, err := pgconn.Connect(context.Background(), dsn); err == nil {
		conn.Close(context.Background())
		t.Fatal("the connection whose session panicked was served")
	}
	conn, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("the next client: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "SELECT COUNT(*) FROM people").ReadAll(); err != nil {
		t.Errorf("the next client's query: %v", err)
	}
}

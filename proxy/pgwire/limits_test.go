package pgwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// hangGuard bounds a read that the server is expected to answer, so that a
// regression fails the test instead of hanging it; it asserts nothing about
// speed.
const hangGuard = 10 * time.Second

// flakyListener fails its first failures Accept calls with err, then
// accepts for real.
type flakyListener struct {
	net.Listener
	failures atomic.Int32
	err      error
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.failures.Add(-1) >= 0 {
		return nil, l.err
	}
	return l.Listener.Accept()
}

func acceptError(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

// Running out of file descriptors (about 20,000 idle clients) or a client
// resetting before accept must not end Serve: it retries, and the next
// client is served.
func TestAcceptRetriesTemporaryErrors(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED} {
		t.Run(errno.Error(), func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			fl := &flakyListener{Listener: l, err: acceptError(errno)}
			fl.failures.Store(4)
			srv := New(func(string) Session { return echoSession{} }, Options{Trust: true})
			served := make(chan error, 1)
			go func() { served <- srv.Serve(fl) }()
			defer func() {
				srv.Shutdown(context.Background()) //nolint:errcheck // checked through served below
				if err := <-served; !errors.Is(err, ErrServerClosed) {
					t.Errorf("Serve returned %v, want ErrServerClosed", err)
				}
			}()
			conn, err := pgconn.Connect(context.Background(), "postgres://alice@"+l.Addr().String()+"/countwall?sslmode=disable&connect_timeout=10")
			if err != nil {
				t.Fatalf("connect after %v accept errors: %v", errno, err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(context.Background(), "SELECT COUNT(*) FROM people").ReadAll(); err != nil {
				t.Errorf("query: %v", err)
			}
			if left := fl.failures.Load(); left >= 0 {
				t.Errorf("%d accept failures were never tried", left+1)
			}
		})
	}
}

// A listener that is broken for good still ends Serve with its error.
func TestAcceptReturnsPermanentErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	broken := acceptError(syscall.EBADF)
	fl := &flakyListener{Listener: l, err: broken}
	fl.failures.Store(1)
	srv := New(func(string) Session { return echoSession{} }, Options{Trust: true})
	if err := srv.Serve(fl); !errors.Is(err, syscall.EBADF) {
		t.Errorf("Serve returned %v, want the EBADF accept error", err)
	}
}

func TestAcceptBackoff(t *testing.T) {
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	var d time.Duration
	for i, w := range want {
		d = nextBackoff(d)
		if d != w*time.Millisecond {
			t.Errorf("retry %d waits %v, want %v", i+1, d, w*time.Millisecond)
		}
	}
}

// startRecording starts a server over a real engine whose accepted
// connections are announced on the returned channel.
func startRecording(t *testing.T, tweak func(*Options)) (*testServer, <-chan net.Conn) {
	t.Helper()
	tracked := make(chan net.Conn, 64)
	ts := startServer(t, "exact", nil, tweak, func(s *Server) {
		s.onTrack = func(nc net.Conn) { tracked <- nc }
	})
	return ts, tracked
}

// stuckInSCRAM opens a connection that sends its startup and stops once
// the server asks for SCRAM, as in the lock-out the issue reports.
func stuckInSCRAM(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := nc.Write(startupBytes(testAnalyst)); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(hangGuard))
	fe := pgproto3.NewFrontend(nc, nc)
	msg, err := fe.Receive()
	if err != nil {
		t.Fatalf("waiting for the SCRAM request: %v", err)
	}
	if _, ok := msg.(*pgproto3.AuthenticationSASL); !ok {
		t.Fatalf("server sent %T, want AuthenticationSASL", msg)
	}
	return nc
}

// The lock-out, with small limits: 16 sockets that send a startup
// and never answer SCRAM, and more that never send a byte, held every
// session slot, so every real login got 53300. Now they hold no session
// slot, at most MaxPendingAuth of them are pending once started, and a real
// login succeeds while all of them are still open.
func TestUnauthenticatedClientsDoNotLockOutALogin(t *testing.T) {
	ts, tracked := startRecording(t, func(o *Options) {
		o.MaxConnections = 2
		o.MaxPendingAuth = 4
		o.AuthTimeout = time.Minute // long: the test shows the bound, not the timeout
	})
	for i := 0; i < 16; i++ {
		stuckInSCRAM(t, ts.addr)
		<-tracked
	}
	for i := 0; i < 8; i++ {
		silent, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer silent.Close()
		<-tracked
	}
	ts.srv.mu.Lock()
	started, silent := ts.srv.pending.started.Len(), ts.srv.pending.silent.Len()
	ts.srv.mu.Unlock()
	if started != 4 || silent != 8 {
		t.Errorf("%d started and %d silent connections pending authentication, want the limit 4 and the 8 silent ones", started, silent)
	}
	for i := 0; i < 2; i++ { // both session slots, one after the other
		conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
		var n int64
		if err := conn.QueryRow(context.Background(), "SELECT COUNT(*) FROM people").Scan(&n); err != nil || n != 5000 {
			t.Fatalf("login %d with 24 unauthenticated sockets open: count %d, %v", i+1, n, err)
		}
	}
	// Sessions stay bounded by max_connections.
	_, err := pgx.Connect(context.Background(), ts.dsn(testAnalyst, testPassword))
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "53300" {
		t.Errorf("third session: %v, want 53300", err)
	}
}

// A connection that does not finish authenticating within AuthTimeout is
// closed, whether it stopped in SCRAM or never sent a startup.
func TestAuthTimeoutClosesSlowLogins(t *testing.T) {
	ts, tracked := startRecording(t, func(o *Options) { o.AuthTimeout = 100 * time.Millisecond })
	inSCRAM := stuckInSCRAM(t, ts.addr)
	<-tracked
	silent, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	<-tracked
	for name, nc := range map[string]net.Conn{"stopped in SCRAM": inSCRAM, "never sent a startup": silent} {
		nc.SetReadDeadline(time.Now().Add(hangGuard))
		if _, err := io.ReadAll(nc); err != nil {
			t.Errorf("%s: the server did not close it: %v", name, err)
		}
	}
}

// pipeline opens a trust connection to a fake session and returns a
// frontend to send raw protocol messages with.
func pipeline(t *testing.T, tweak func(*Options)) *pgproto3.Frontend {
	t.Helper()
	return pipelineTo(t, func(string) Session { return echoSession{} }, tweak)
}

// pipelineTo is pipeline to the sessions newSession makes.
func pipelineTo(t *testing.T, newSession func(string) Session, tweak func(*Options)) *pgproto3.Frontend {
	t.Helper()
	opts := Options{Trust: true}
	if tweak != nil {
		tweak(&opts)
	}
	srv := New(newSession, opts)
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
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(hangGuard))
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "alice"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return fe
		}
	}
}

// receiveUntilReady collects the server's answers up to ReadyForQuery, or
// up to the connection's end after a FATAL error.
func receiveUntilReady(t *testing.T, fe *pgproto3.Frontend) []string {
	t.Helper()
	var got []string
	for {
		msg, err := fe.Receive()
		if err != nil {
			return append(got, "closed")
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			got = append(got, fmt.Sprintf("%s %s %s", m.Severity, m.Code, m.Message))
		case *pgproto3.ReadyForQuery:
			return append(got, "ready "+string(m.TxStatus))
		default:
			got = append(got, fmt.Sprintf("%T", msg)[len("*pgproto3."):])
		}
	}
}

// countOf returns how many answers were name and the ones that were not.
func countOf(answers []string, name string) (n int, others []string) {
	for _, a := range answers {
		if a == name {
			n++
		} else {
			others = append(others, a)
		}
	}
	return n, others
}

// 200,000 named prepared statements grew the server by 150 MB: each
// session may hold MaxPreparedStatements (1,000 by default), and named
// portals are bounded alike.
func TestPreparedStatementAndPortalCaps(t *testing.T) {
	fe := pipeline(t, nil)
	for i := 0; i <= 1000; i++ {
		fe.Send(&pgproto3.Parse{Name: fmt.Sprintf("s%d", i), Query: "SELECT COUNT(*) FROM people WHERE age = $1"})
	}
	fe.Send(&pgproto3.Sync{})
	// The unnamed statement is replaced, never added: it is still allowed.
	fe.Send(&pgproto3.Parse{Query: "SELECT COUNT(*) FROM people WHERE age = $1"})
	fe.Send(&pgproto3.Parse{Name: "s0", Query: "SELECT COUNT(*) FROM people WHERE age = $1"})
	fe.Send(&pgproto3.Sync{})
	fe.Send(&pgproto3.Close{ObjectType: 'S', Name: "s1"})
	fe.Send(&pgproto3.Parse{Name: "again", Query: "SELECT COUNT(*) FROM people WHERE age = $1"})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	n, rest := countOf(receiveUntilReady(t, fe), "ParseComplete")
	want := []string{"ERROR 54000 too many prepared statements: this session already holds 1000, the limit; close unused ones (the protocol's Close, or DEALLOCATE)", "ready I"}
	if n != 1000 || fmt.Sprint(rest) != fmt.Sprint(want) {
		t.Errorf("1001 named Parse: %d ParseComplete then %q, want 1000 then %q", n, rest, want)
	}
	if got, want := receiveUntilReady(t, fe), []string{"ParseComplete", "ERROR 42P05 prepared statement \"s0\" already exists", "ready I"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("unnamed, then a duplicate: %q, want %q", got, want)
	}
	if got, want := receiveUntilReady(t, fe), []string{"CloseComplete", "ParseComplete", "ready I"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after closing one: %q, want %q", got, want)
	}

	// Portals live until Sync ends the implicit transaction.
	for i := 0; i <= 1000; i++ {
		fe.Send(&pgproto3.Bind{DestinationPortal: fmt.Sprintf("p%d", i), PreparedStatement: "s0", Parameters: [][]byte{[]byte("30")}})
	}
	fe.Send(&pgproto3.Sync{})
	fe.Send(&pgproto3.Bind{DestinationPortal: "p0", PreparedStatement: "s0", Parameters: [][]byte{[]byte("30")}})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	n, rest = countOf(receiveUntilReady(t, fe), "BindComplete")
	want = []string{"ERROR 54000 too many portals: this session already holds 1000, the limit; close unused ones or end the transaction block", "ready I"}
	if n != 1000 || fmt.Sprint(rest) != fmt.Sprint(want) {
		t.Errorf("1001 named Bind: %d BindComplete then %q, want 1000 then %q", n, rest, want)
	}
	if got, want := receiveUntilReady(t, fe), []string{"BindComplete", "ready I"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("portal p0 after Sync: %q, want %q (Sync drops the portals)", got, want)
	}
}

// Messages countwall does not take are named as PostgreSQL names them, and
// Bind's format codes are checked as PostgreSQL checks them.
func TestUnsupportedMessagesAndFormats(t *testing.T) {
	raw := func(typ byte, body []byte) pgproto3.FrontendMessage { return rawMessage{typ, body} }
	parse := &pgproto3.Parse{Name: "s", Query: "SELECT COUNT(*) FROM people WHERE age = $1"}
	tests := []struct {
		name string
		send []pgproto3.FrontendMessage
		want []string
	}{
		{"CopyData", []pgproto3.FrontendMessage{&pgproto3.CopyData{Data: []byte("1\n")}},
			[]string{"FATAL 08P01 unexpected message type 0x64 (CopyData)", "closed"}},
		{"CopyDone", []pgproto3.FrontendMessage{&pgproto3.CopyDone{}},
			[]string{"FATAL 08P01 unexpected message type 0x63 (CopyDone)", "closed"}},
		{"CopyFail", []pgproto3.FrontendMessage{&pgproto3.CopyFail{Message: "stop"}},
			[]string{"FATAL 08P01 unexpected message type 0x66 (CopyFail)", "closed"}},
		{"PasswordMessage after login", []pgproto3.FrontendMessage{&pgproto3.PasswordMessage{Password: "x"}},
			[]string{"FATAL 08P01 unexpected message type 0x70 (PasswordMessage)", "closed"}},
		{"unknown type byte", []pgproto3.FrontendMessage{raw('z', nil)},
			[]string{"FATAL 08P01 invalid frontend message type 122", "closed"}},
		{"FunctionCall", []pgproto3.FrontendMessage{&pgproto3.FunctionCall{Function: 1598}},
			[]string{"ERROR 0A000 function calls (FunctionCall messages) are not supported", "ready I"}},
		{"result format 2", []pgproto3.FrontendMessage{parse,
			&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("3")}, ResultFormatCodes: []int16{2}}, &pgproto3.Sync{}},
			[]string{"ParseComplete", "ERROR 08P01 unsupported format code: 2", "ready I"}},
		{"result format -1", []pgproto3.FrontendMessage{parse,
			&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("3")}, ResultFormatCodes: []int16{-1}}, &pgproto3.Sync{}},
			[]string{"ParseComplete", "ERROR 08P01 unsupported format code: -1", "ready I"}},
		{"two result formats for one column", []pgproto3.FrontendMessage{parse,
			&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("3")}, ResultFormatCodes: []int16{0, 1}}, &pgproto3.Sync{}},
			[]string{"ParseComplete", "ERROR 08P01 bind message has 2 result formats but 1 columns", "ready I"}},
		{"parameter format 7", []pgproto3.FrontendMessage{parse,
			&pgproto3.Bind{PreparedStatement: "s", ParameterFormatCodes: []int16{7}, Parameters: [][]byte{[]byte("3")}}, &pgproto3.Sync{}},
			[]string{"ParseComplete", "ERROR 08P01 unsupported format code: 7", "ready I"}},
		{"binary result format is fine", []pgproto3.FrontendMessage{parse,
			&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("3")}, ResultFormatCodes: []int16{1}}, &pgproto3.Sync{}},
			[]string{"ParseComplete", "BindComplete", "ready I"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fe := pipeline(t, nil)
			for _, m := range tc.send {
				fe.Send(m)
			}
			if err := fe.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := receiveUntilReady(t, fe); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// rawMessage is a frontend message with any type byte, for what pgproto3
// has no type for.
type rawMessage struct {
	typ  byte
	body []byte
}

func (rawMessage) Frontend() {}
func (m rawMessage) Encode(dst []byte) ([]byte, error) {
	dst = append(dst, m.typ)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(m.body)+4))
	return append(dst, m.body...), nil
}
func (m rawMessage) Decode([]byte) error { return errors.New("rawMessage is only sent") }

// A client of protocol 2.0 gets the error PostgreSQL's postmaster sends it,
// in the old protocol's format that such a client reads ('E', text, NUL);
// a client of a newer major version gets it as an ErrorResponse.
func TestUnsupportedProtocolVersion(t *testing.T) {
	_, dsn := startFake(t, echoSession{})
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
	startup := func(version uint32, body []byte) net.Conn {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		packet := binary.BigEndian.AppendUint32(nil, uint32(len(body)+8))
		packet = binary.BigEndian.AppendUint32(packet, version)
		if _, err := nc.Write(append(packet, body...)); err != nil {
			t.Fatal(err)
		}
		nc.SetReadDeadline(time.Now().Add(hangGuard))
		return nc
	}
	// Protocol 2.0's startup packet: database, user, options, unused, tty.
	v2 := make([]byte, 64+32+64+64+64)
	copy(v2, "countwall")
	copy(v2[64:], "alice")
	got, err := io.ReadAll(startup(2<<16, v2))
	if err != nil {
		t.Fatal(err)
	}
	if want := "EFATAL:  unsupported frontend protocol 2.0: server supports 3.0 to 3.0\n\x00"; !bytes.Equal(got, []byte(want)) {
		t.Errorf("protocol 2.0 got %q, want %q", got, want)
	}

	v4 := startup(4<<16|1, []byte("user\x00alice\x00\x00"))
	msg, err := pgproto3.NewFrontend(v4, v4).Receive()
	er, ok := msg.(*pgproto3.ErrorResponse)
	if err != nil || !ok || er.Severity != "FATAL" || er.Code != "0A000" || er.Message != "unsupported frontend protocol 4.1: server supports 3.0 to 3.0" {
		t.Errorf("protocol 4.1 got %+v, %v", msg, err)
	}
}

// A 3.x startup newer than 3.0, or one asking for protocol options, is
// answered with NegotiateProtocolVersion as PostgreSQL 16 answers it, and
// the client carries on in 3.0.
func TestNegotiatesProtocolThreeZero(t *testing.T) {
	_, dsn := startFake(t, echoSession{})
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(hangGuard))
	fe := pgproto3.NewFrontend(nc, nc)
	body := binary.BigEndian.AppendUint32(nil, 3<<16|5)
	body = append(body, "user\x00alice\x00_pq_.compression\x00on\x00\x00"...)
	if _, err := nc.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body)+4)), body...)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 2 {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.NegotiateProtocolVersion:
			got = append(got, fmt.Sprintf("negotiate 3.%d %v", m.NewestMinorProtocol, m.UnrecognizedOptions))
		default:
			got = append(got, fmt.Sprintf("%T", msg)[len("*pgproto3."):])
		}
	}
	if want := "[negotiate 3.0 [_pq_.compression] AuthenticationOk]"; fmt.Sprint(got) != want {
		t.Errorf("3.5 startup got %v, want %s", got, want)
	}

	// pgx asking for 3.2 gets 3.0 and works.
	conn, err := pgconn.Connect(context.Background(), dsn+"&max_protocol_version=3.2")
	if err != nil {
		t.Fatalf("connect asking for 3.2: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "SELECT COUNT(*) FROM people").ReadAll(); err != nil {
		t.Errorf("query after negotiating 3.0: %v", err)
	}
}

// A login that has sent its startup is never closed to make room for
// sockets that send nothing: with MaxPendingAuth 4 (so 128 silent ones), a
// connection waiting in SCRAM stays open while 200 silent sockets come and
// evict each other (72 evictions, all of silent ones), and a real login
// then succeeds.
func TestSilentSocketsNeverEvictAStartedLogin(t *testing.T) {
	ts, tracked := startRecording(t, func(o *Options) {
		o.MaxPendingAuth = 4
		o.AuthTimeout = time.Minute
	})
	inSCRAM := stuckInSCRAM(t, ts.addr)
	serverSide := <-tracked
	for i := 0; i < 200; i++ {
		silent, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer silent.Close()
		<-tracked
	}
	if got := ts.srv.EvictedLogins(); got != 200-silentFactor*4 {
		t.Errorf("%d evictions, want %d (the silent sockets beyond the %d allowed)", got, 200-silentFactor*4, silentFactor*4)
	}
	ts.srv.mu.Lock()
	_, stillPending := ts.srv.pending.at[serverSide]
	started := ts.srv.pending.started.Len()
	ts.srv.mu.Unlock()
	if started != 1 || !stillPending {
		t.Errorf("the login in SCRAM is no longer pending (started %d, pending %v)", started, stillPending)
	}
	inSCRAM.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := inSCRAM.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the login in SCRAM was closed: %v", err)
	}
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	var n int64
	if err := conn.QueryRow(context.Background(), "SELECT COUNT(*) FROM people").Scan(&n); err != nil || n != 5000 {
		t.Fatalf("login with 200 silent sockets opened: count %d, %v", n, err)
	}
}

// Package pgwire is countwall's PostgreSQL wire protocol (v3) front door:
// startup, SCRAM-SHA-256 authentication, the simple and extended query
// protocols, cancellation, and result and error encoding. It knows the
// Engine only through the Session interface (session.go).
package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Options configure a Server.
type Options struct {
	// TLSConfig, when set, lets clients upgrade with SSLRequest; otherwise
	// SSLRequest is answered 'N' and the client may continue in plain text.
	TLSConfig *tls.Config
	// Verifier returns the analyst's SCRAM-SHA-256 verifier.
	Verifier func(analyst string) (verifier string, ok bool)
	// Trust skips passwords. Serve refuses it on a non-loopback listener.
	Trust bool
	// MaxConnections bounds concurrent authenticated sessions (default 64).
	MaxConnections int
	// MaxPendingAuth bounds connections that have not finished their
	// startup and authentication, counted from accept, so that clients who
	// never authenticate cannot take the sessions' slots (default 32). It
	// bounds those that have sent a startup packet, and 32 times it those
	// that have sent nothing complete yet; when a class is full, its
	// connection waiting longest is closed to make room (logins.go). A login
	// under way is never closed for a silent socket, and one stalled in SCRAM
	// only for a newer startup.
	MaxPendingAuth int
	// AuthTimeout is how long a connection may take from accept to the end
	// of authentication (default 10s).
	AuthTimeout time.Duration
	// MaxPreparedStatements and MaxPortals bound the named prepared
	// statements and portals one session may hold (default 1000 each).
	MaxPreparedStatements int
	MaxPortals            int
	// IdleTimeout closes connections idle for longer (0: never).
	IdleTimeout time.Duration
	// QueryTimeout is each statement's deadline (0: none beyond the engine's).
	QueryTimeout time.Duration
	// MaxMessageBytes bounds one protocol message (default 1 MiB).
	MaxMessageBytes int
	Logger          *slog.Logger
}

// Server serves the PostgreSQL protocol.
type Server struct {
	sessions Sessions
	opts     Options
	logger   *slog.Logger

	// decoyKey derives the salts shown to unknown analysts. It is secret and
	// per process so that a client cannot compute a decoy salt itself and
	// tell an unknown analyst from a known one.
	decoyKey []byte

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	open      map[net.Conn]struct{} // every accepted connection, for Shutdown
	pending   pendingLogins         // connections not yet authenticated (logins.go)
	// evicted counts pending connections closed to make room since
	// evictLogged, when that was last logged.
	evicted     int
	evictLogged time.Time
	conns       map[uint32]*conn // authenticated sessions, by process id, for cancel requests
	nextPID     uint32
	closing     atomic.Bool
	wg          sync.WaitGroup

	// onTrack, when set (by tests, before Serve), is told of each accepted
	// connection once Shutdown and the pending-auth bound account for it.
	onTrack func(net.Conn)

	// evictedTotal counts every eviction, for metrics (logins.go).
	evictedTotal atomic.Uint64
}

// New makes a server that opens sessions with sessions.
func New(sessions Sessions, opts Options) *Server {
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = 64
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = 1 << 20
	}
	if opts.MaxPendingAuth <= 0 {
		opts.MaxPendingAuth = 32
	}
	if opts.AuthTimeout <= 0 {
		opts.AuthTimeout = 10 * time.Second
	}
	if opts.MaxPreparedStatements <= 0 {
		opts.MaxPreparedStatements = 1000
	}
	if opts.MaxPortals <= 0 {
		opts.MaxPortals = 1000
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	decoyKey := make([]byte, 32)
	rand.Read(decoyKey)
	return &Server{sessions: sessions, opts: opts, logger: logger, decoyKey: decoyKey,
		listeners: map[net.Listener]struct{}{}, open: map[net.Conn]struct{}{}, conns: map[uint32]*conn{},
		pending: newPendingLogins()}
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("pgwire: server closed")

// Serve accepts connections on l until Shutdown.
func (s *Server) Serve(l net.Listener) error {
	if s.opts.Trust && !isLoopback(l.Addr()) {
		return fmt.Errorf("trust authentication is only allowed on a loopback address, not %s", l.Addr())
	}
	if s.opts.Trust {
		s.logger.Warn("trust authentication: any local client may connect as any analyst without a password", "addr", l.Addr().String())
	}
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	var backoff time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.closing.Load() {
				return ErrServerClosed
			}
			if temporaryAcceptError(err) {
				// Out of file descriptors, a connection reset before it was
				// accepted and the like are the clients' doing or pass by
				// themselves: wait and go on, as net/http's Server does.
				backoff = nextBackoff(backoff)
				s.logger.Warn("accept failed; retrying", "err", err, "retry_in", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		if !s.track(nc) {
			nc.Close()
			return ErrServerClosed
		}
		go func() {
			defer s.wg.Done()
			defer s.untrack(nc)
			defer s.recoverConn(nc)
			s.serveConn(nc)
		}()
	}
}

// Shutdown stops accepting, lets statements in flight finish, then closes
// every connection; it returns when all are closed or ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing.Store(true)
	for l := range s.listeners {
		l.Close()
	}
	// Wake every connection blocked reading, including those still in their
	// startup: each notices the server is closing once its statement in
	// flight, if any, has finished.
	for nc := range s.open {
		nc.SetReadDeadline(time.Now())
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for nc := range s.open {
			nc.Close()
		}
		s.mu.Unlock()
		return ctx.Err()
	}
}

// recoverConn keeps a bug met while serving one connection from ending the
// process and every other session with it, as net/http does: the panic is
// logged and that connection closed.
func (s *Server) recoverConn(nc net.Conn) {
	if p := recover(); p != nil {
		s.logger.Error("panic serving a connection", "client", clientAddr(nc), "panic", p, "stack", string(debug.Stack()))
		nc.Close()
	}
}

// Accept retry delays: 5 ms doubling up to 1 s, as net/http's Server.
const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
)

func nextBackoff(d time.Duration) time.Duration {
	if d == 0 {
		return minAcceptBackoff
	}
	return min(2*d, maxAcceptBackoff)
}

// temporaryAcceptError tells an accept error that clients or a passing
// shortage caused (the listener still works) from one that ends serving.
func temporaryAcceptError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, errno := range []syscall.Errno{
		syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EPROTO, syscall.EPERM,
		syscall.EINTR, syscall.EAGAIN,
	} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

func isLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		_, unix := a.(*net.UnixAddr)
		return unix
	}
	return tcp.IP.IsLoopback()
}

// track records an accepted connection; it refuses once Shutdown has begun,
// so that no connection starts after Shutdown waits for them all.
func (s *Server) track(nc net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	s.open[nc] = struct{}{}
	s.wg.Add(1)
	for _, evicted := range s.pending.add(nc, s.opts.MaxPendingAuth) {
		// Its goroutine sees the closed socket and ends.
		evicted.Close()
		s.noteEviction()
	}
	if s.onTrack != nil {
		s.onTrack(nc)
	}
	return true
}

// noteEviction logs closing a pending connection to make room, at most
// once a second with the count since, so that a flood of silent clients
// cannot flood the log as well. The caller holds s.mu.
func (s *Server) noteEviction() {
	s.evicted++
	s.evictedTotal.Add(1)
	if now := time.Now(); now.Sub(s.evictLogged) >= time.Second {
		s.logger.Warn("too many connections still authenticating; closed the oldest to make room",
			"limit", s.opts.MaxPendingAuth, "closed", s.evicted)
		s.evicted, s.evictLogged = 0, now
	}
}

// authenticated ends a connection's pending period: it no longer counts
// against MaxPendingAuth and cannot be closed to make room.
func (s *Server) authenticated(nc net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending.remove(nc)
}

func (s *Server) untrack(nc net.Conn) {
	s.authenticated(nc)
	s.mu.Lock()
	delete(s.open, nc)
	s.mu.Unlock()
}

// register admits a connection, or refuses it when the server is full.
func (s *Server) register(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns) >= s.opts.MaxConnections || s.closing.Load() {
		return false
	}
	for {
		s.nextPID++
		if _, taken := s.conns[s.nextPID]; !taken && s.nextPID != 0 {
			break
		}
	}
	c.pid = s.nextPID
	var key [4]byte
	rand.Read(key[:])
	c.secret = binary.BigEndian.Uint32(key[:])
	s.conns[c.pid] = c
	return true
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	if s.conns[c.pid] == c {
		delete(s.conns, c.pid)
	}
	s.mu.Unlock()
}

// cancel cancels the statement running on the connection with this key.
func (s *Server) cancel(pid uint32, secret []byte) {
	if len(secret) != 4 {
		return
	}
	s.mu.Lock()
	c := s.conns[pid]
	s.mu.Unlock()
	if c != nil && c.secret == binary.BigEndian.Uint32(secret) {
		c.cancelRunning()
	}
}

// Package server wires one proxy.Engine to the PostgreSQL wire protocol the
// way the config says: the SCRAM verifiers of the configured analysts, a
// session per connection, TLS, the connection limits and timeouts. `countwall
// serve` runs it with config reload; the demo and the bench start loopback
// firewalls with it, so every firewall is put together the same way.
package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"countwall/proxy"
	"countwall/proxy/pgwire"
)

// New makes a wire server answering through engine, under the server
// settings of the config the engine runs (read once: listen address and
// limits do not change on reload, analysts and their passwords do).
func New(engine *proxy.Engine, logger *slog.Logger) (*pgwire.Server, error) {
	s := engine.Config().Server
	opts := pgwire.Options{
		// The verifier reads the live config, so a reload that adds,
		// removes or re-keys an analyst applies to the next login.
		Verifier: func(analyst string) (string, bool) {
			a, ok := engine.Config().Analysts[analyst]
			return a.Password, ok && a.Password != ""
		},
		Trust:          s.Trust,
		MaxConnections: s.MaxConnections,
		IdleTimeout:    s.IdleTimeout,
		QueryTimeout:   s.QueryTimeout,
		AuthTimeout:    s.AuthTimeout,
		MaxPendingAuth: s.MaxPendingAuth,
		Logger:         logger,
	}
	if s.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(s.TLSCert, s.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("server.tls_cert: %w", err)
		}
		opts.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return pgwire.New(func(analyst string) pgwire.Session { return engine.NewSession(analyst) }, opts), nil
}

// Loopback is a firewall serving one engine on a loopback port, for
// programs that run attacks or measurements against it over the wire.
type Loopback struct {
	Engine *proxy.Engine
	Addr   string // host:port to dial
	server *pgwire.Server
}

// StartLoopback serves engine on 127.0.0.1 at a free port until Stop. Stop
// closes the engine too.
func StartLoopback(engine *proxy.Engine) (*Loopback, error) {
	srv, err := New(engine, nil)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on loopback: %w", err)
	}
	go srv.Serve(l) //nolint:errcheck // ends with ErrServerClosed at Stop
	return &Loopback{Engine: engine, Addr: l.Addr().String(), server: srv}, nil
}

// Stop ends the server, waiting up to ten seconds for statements in flight,
// and closes the engine.
func (lb *Loopback) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lb.server.Shutdown(ctx) //nolint:errcheck // every client has gone by now
	lb.Engine.Close()
}

package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"countwall/proxy"
	"countwall/proxy/metrics"
	"countwall/proxy/pgwire"
)

// serveMetrics exposes Prometheus metrics on addr (server.metrics_listen)
// at /metrics; an empty addr serves nothing. stop shuts the endpoint down.
// The metrics, when served, are returned so that the risk monitor can
// report to them.
func serveMetrics(addr string, engine *proxy.Engine, srv *pgwire.Server, logger *slog.Logger, ready func(net.Addr)) (m *metrics.Metrics, stop func(), err error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("server.metrics_listen: %w", err)
	}
	m = metrics.New(engine, srv)
	engine.SetStatementObserver(m)
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics endpoint stopped", "err", err)
		}
	}()
	logger.Info("metrics served", "addr", l.Addr().String(), "path", "/metrics")
	if ready != nil {
		ready(l.Addr())
	}
	return m, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(ctx) //nolint:errcheck // the process is stopping
	}, nil
}

package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/spf13/pflag"

	"countwall/config"
	"countwall/proxy"
	"countwall/proxy/metrics"
	"countwall/proxy/monitor"
	"countwall/proxy/pgwire"
)

// ServeOptions say where the config comes from and what reloads it.
type ServeOptions struct {
	// Load reads the config; it is called again on every reload.
	Load func() (*config.Config, error)
	// Watch, when set, is the config file: writing or replacing it reloads.
	Watch string
	// Reload delivers a value for each reload asked from outside (serve
	// sends SIGHUP here).
	Reload <-chan os.Signal
	// Logger receives the serving, reload and shutdown lines.
	Logger *slog.Logger
	// Ready, when set, is told the listening address once connections are
	// accepted.
	Ready func(addr net.Addr)
	// OnRisk, when set, is told each decision of the risk monitor
	// (monitor: in the config), for a metric.
	OnRisk func(monitor.Decision)
	// MetricsReady, when set, is told the metrics address once it serves.
	MetricsReady func(addr net.Addr)
}

// Serve opens the engine of the loaded config and serves it on
// server.listen until ctx is done, then stops accepting, lets statements in
// flight finish (up to 30 seconds) and returns. A reload that fails leaves
// the config in force as it was, with the reason logged.
func Serve(ctx context.Context, o ServeOptions) error {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg, err := o.Load()
	if err != nil {
		return err
	}
	engine, err := proxy.Open(ctx, cfg, proxy.Options{Logger: logger})
	if err != nil {
		return err
	}
	defer engine.Close()
	// The tables are read into memory before the first analyst connects:
	// no first query waits for the read, and none is answered by a slower
	// path meanwhile.
	start := time.Now()
	logger.Info("reading the protected tables into memory before accepting analysts")
	if err := engine.Preload(ctx); err != nil {
		return err
	}
	logger.Info("tables ready", "took", time.Since(start).Round(time.Millisecond))
	srv, err := New(engine, logger)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("server.listen: %w", err)
	}
	listeners := []net.Listener{l}
	if dir := cfg.Server.SocketDir; dir != "" {
		ul, err := listenUnix(dir, l.Addr())
		if err != nil {
			l.Close()
			return fmt.Errorf("server.socket_dir: %w", err)
		}
		listeners = append(listeners, ul)
	}
	logger.Info("countwall serving", "addr", l.Addr().String(), "mechanism", engine.Mechanism(), "database", proxy.StoreName(cfg.Database))
	if len(listeners) > 1 {
		logger.Info("countwall serving on a Unix socket", "path", listeners[1].Addr().String())
	}
	m, stopMetrics, err := serveMetrics(cfg.Server.MetricsListen, engine, srv, logger, o.MetricsReady)
	if err != nil {
		closeAll(listeners)
		return err
	}
	defer stopMetrics()
	if stop := startMonitor(ctx, engine, cfg, logger, riskReporter(m, o.OnRisk)); stop != nil {
		defer stop()
	}
	reload := func(why string) {
		next, err := o.Load()
		if err == nil {
			err = engine.Reload(ctx, next)
		}
		if err != nil {
			logger.Error("config reload refused; the old config stays in force", "trigger", why, "err", err)
			return
		}
		logger.Info("config reloaded", "trigger", why, "mechanism", engine.Mechanism())
		warnUnapplied(logger, cfg, next)
	}
	if o.Watch != "" {
		stopWatch, err := watchConfig(o.Watch, func() { reload("file change") })
		if err != nil {
			logger.Warn("not watching the config file; SIGHUP still reloads it", "err", err)
		} else {
			defer stopWatch()
		}
	}
	return serveUntilDone(ctx, srv, listeners, o, logger, reload)
}

func closeAll(listeners []net.Listener) {
	for _, l := range listeners {
		l.Close()
	}
}

// riskReporter tells each of the risk monitor's decisions to the metrics
// (when served) and to onRisk (when set).
func riskReporter(m *metrics.Metrics, onRisk func(monitor.Decision)) func(monitor.Decision) {
	if m == nil {
		return onRisk
	}
	return func(d monitor.Decision) {
		m.Risk(d.Analyst, d.Findings, d.Individuals, d.Suspend)
		if onRisk != nil {
			onRisk(d)
		}
	}
}

// serveUntilDone accepts connections on the listeners until ctx is done,
// then lets the statements in flight finish (up to 30 seconds); a reload
// signal reloads. Ready is told the first listener's address.
func serveUntilDone(ctx context.Context, srv *pgwire.Server, listeners []net.Listener, o ServeOptions, logger *slog.Logger, reload func(why string)) error {
	served := make(chan error, len(listeners))
	for _, l := range listeners {
		go func() { served <- srv.Serve(l) }()
	}
	if o.Ready != nil {
		o.Ready(listeners[0].Addr())
	}
	for {
		select {
		case err := <-served:
			// One listener failed: stop serving on the others too.
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			srv.Shutdown(shutdownCtx) //nolint:errcheck // the listener's error is the one to report
			return err
		case <-ctx.Done():
			logger.Info("shutting down: finishing statements in flight")
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return srv.Shutdown(shutdownCtx)
		case sig := <-o.Reload:
			reload("signal " + sig.String())
		}
	}
}

// watchConfig calls onChange after the config file is written or replaced.
// It watches the directory, since editors often replace a file by renaming.
func watchConfig(path string, onChange func()) (stop func(), err error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		w.Close()
		return nil, err
	}
	if err := w.Add(filepath.Dir(abs)); err != nil {
		w.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		var debounce <-chan time.Time
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Clean(ev.Name) == abs && ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename) != 0 {
					debounce = time.After(200 * time.Millisecond)
				}
			case <-debounce:
				onChange()
			case <-w.Errors:
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); w.Close() }, nil
}

// Command is `countwall serve`: the config file, the flags that override
// its keys, and the least level logged.
type Command struct {
	ConfigPath string
	LogLevel   string
}

// Run serves under the config at ConfigPath (its keys overridden by
// flags), logging at LogLevel to log; SIGHUP reloads the config.
func (c Command) Run(ctx context.Context, flags *pflag.FlagSet, log io.Writer) error {
	if c.ConfigPath == "" {
		return errors.New("--config is required")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", c.LogLevel)
	}
	hangups := make(chan os.Signal, 1)
	signal.Notify(hangups, syscall.SIGHUP)
	defer signal.Stop(hangups)
	return Serve(ctx, ServeOptions{
		Load:   func() (*config.Config, error) { return config.Load(c.ConfigPath, flags) },
		Watch:  c.ConfigPath,
		Reload: hangups,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: level})),
	})
}

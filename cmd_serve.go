package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/spf13/cobra"

	"countwall/config"
	"countwall/planner"
	"countwall/proxy"
	"countwall/proxy/pgwire"
)

func init() {
	var configPath string
	cmd := &cobra.Command{
		Use:   "serve --config FILE",
		Short: "Serve analysts over the PostgreSQL wire protocol",
		Long: `Serve answers analysts' COUNT queries over the PostgreSQL wire protocol, so that
psql, pgx, psycopg2 and other PostgreSQL clients connect as they would to PostgreSQL.

Editing the config file (or sending SIGHUP) reloads it: the mechanism, policy and analysts change
for the next statement. Caps may be lowered, never raised (countwall budget grant raises a
budget). Sessions continue, except those of analysts the new config removes, which are ended
(57P01). An invalid config is refused with a logged reason and the old one stays in force. SIGINT or SIGTERM stops accepting, lets
statements in flight finish, and exits.`,
		Example: `  countwall serve --config examples/countwall.yaml
  PGPASSWORD=alice-secret psql "host=127.0.0.1 port=5433 user=alice dbname=countwall" -c "SHOW budget"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if configPath == "" {
				return errors.New("--config is required")
			}
			return serve(cmd.Context(), configPath, cmd)
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (YAML)")
	cmd.Flags().String("server.listen", "", "listen address (overrides server.listen)")
	cmd.Flags().String("cpuprofile", "", "write a CPU profile of the server to this file until it stops")
	addConfigFlags(cmd)
	rootCmd.AddCommand(cmd)
}

func serve(ctx context.Context, configPath string, cmd *cobra.Command) error {
	if ctx == nil {
		ctx = context.Background()
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	stopProfile, err := startCPUProfile(cmd)
	if err != nil {
		return err
	}
	defer stopProfile()
	load := func() (*config.Config, error) { return config.Load(configPath, cmd.Flags()) }
	cfg, err := load()
	if err != nil {
		return err
	}
	engine, err := proxy.Open(ctx, cfg, proxy.Options{Logger: logger})
	if err != nil {
		return err
	}
	defer engine.Close()

	opts := pgwire.Options{
		Verifier: func(analyst string) (string, bool) {
			a, ok := engine.Config().Analysts[analyst]
			return a.Password, ok && a.Password != ""
		},
		Trust:          cfg.Server.Trust,
		MaxConnections: cfg.Server.MaxConnections,
		IdleTimeout:    cfg.Server.IdleTimeout,
		QueryTimeout:   cfg.Server.QueryTimeout,
		AuthTimeout:    cfg.Server.AuthTimeout,
		MaxPendingAuth: cfg.Server.MaxPendingAuth,
		Logger:         logger,
	}
	if cfg.Server.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.Server.TLSCert, cfg.Server.TLSKey)
		if err != nil {
			return fmt.Errorf("server.tls_cert: %w", err)
		}
		opts.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	srv := pgwire.New(func(analyst string) pgwire.Session { return engine.NewSession(analyst) }, opts)
	l, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("server.listen: %w", err)
	}
	logger.Info("countwall serving", "addr", l.Addr().String(), "mechanism", engine.Mechanism(), "database", planner.StoreName(cfg.Database))

	reload := func(why string) {
		next, err := load()
		if err == nil {
			err = engine.Reload(ctx, next)
		}
		if err != nil {
			logger.Error("config reload refused; the old config stays in force", "trigger", why, "err", err)
			return
		}
		logger.Info("config reloaded", "trigger", why, "mechanism", engine.Mechanism())
	}
	stopWatch, err := watchConfig(configPath, func() { reload("file change") })
	if err != nil {
		logger.Warn("not watching the config file; SIGHUP still reloads it", "err", err)
	} else {
		defer stopWatch()
	}

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	for {
		select {
		case err := <-served:
			return err
		case <-ctx.Done():
			return shutdown(srv, logger)
		case sig := <-signals:
			if sig == syscall.SIGHUP {
				reload("SIGHUP")
				continue
			}
			return shutdown(srv, logger)
		}
	}
}

func shutdown(srv *pgwire.Server, logger *slog.Logger) error {
	logger.Info("shutting down: finishing statements in flight")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return srv.Shutdown(ctx)
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

package server

import (
	"context"
	"log/slog"

	"countwall/config"
	"countwall/proxy"
	"countwall/proxy/admin"
	"countwall/proxy/monitor"
	"countwall/proxy/risk"
)

// startMonitor runs the risk monitor in the background when the config
// asks (monitor.every > 0) and returns what stops it, or nil. Its settings
// are read at start; a reload does not change them.
func startMonitor(ctx context.Context, engine *proxy.Engine, cfg *config.Config, logger *slog.Logger, onRisk func(monitor.Decision)) (stop func()) {
	if cfg.Monitor.Every <= 0 {
		return nil
	}
	m := monitor.New(engine, engine, monitor.Options{Every: cfg.Monitor.Every, Suspend: cfg.Monitor.Suspend, MaxHistory: cfg.Monitor.MaxHistory,
		Risk: risk.Options{IDPPlusOne: cfg.IDPPlusOne(), Domains: admin.RiskDomains(cfg)}, Logger: logger, OnDecision: onRisk})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx)
	}()
	logger.Info("risk monitor on", "every", cfg.Monitor.Every, "suspend", cfg.Monitor.Suspend, "max_history", cfg.Monitor.MaxHistory)
	return func() {
		cancel()
		<-done
	}
}

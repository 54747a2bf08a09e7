package proxy

import (
	"context"
	"time"
)

// retentionEvery is how often the audit's retention (audit.retain) runs
// while the Engine is open, beside once at start.
const retentionEvery = time.Hour

// startRetention deletes audit rows older than the config's audit.retain
// now and every retentionEvery until Close, reading the setting afresh each
// time so that a reload changes it. The ledger is never touched.
func (e *Engine) startRetention() {
	e.stopRetention, e.retentionDone = make(chan struct{}), make(chan struct{})
	e.pruneAudit()
	go func() {
		defer close(e.retentionDone)
		tick := time.NewTicker(retentionEvery)
		defer tick.Stop()
		for {
			select {
			case <-e.stopRetention:
				return
			case <-tick.C:
				e.pruneAudit()
			}
		}
	}()
}

func (e *Engine) stopRetentionLoop() {
	if e.stopRetention == nil {
		return
	}
	close(e.stopRetention)
	<-e.retentionDone
}

// pruneAudit applies audit.retain once.
func (e *Engine) pruneAudit() {
	retain := e.live.Load().cfg.Audit.Retain
	if retain <= 0 {
		return
	}
	n, err := e.state.PruneAudit(context.Background(), time.Now().Add(-retain))
	if err != nil {
		e.logger.Error("audit retention failed", "err", err)
		return
	}
	if n > 0 {
		e.logger.Info("audit rows past retention deleted", "rows", n, "retain", retain)
	}
}

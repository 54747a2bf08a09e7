package proxy

import (
	"context"
	"fmt"

	"countwall/pgerror"
	"countwall/proxy/state"
)

// Suspend refuses every later statement of analyst (42501) until the
// Engine closes: the risk monitor's decision that the analyst's released answers
// already determine an individual. reason names what was found (patterns
// and counts), never a value. The refusal does not depend on the
// statement, so it runs before anything is parsed or read.
func (e *Engine) Suspend(analyst, reason string) {
	if _, already := e.suspended.LoadOrStore(analyst, reason); !already {
		e.logger.Warn("analyst suspended by the risk monitor", "analyst", analyst, "reason", reason)
	}
}

// Suspended reports whether analyst is suspended.
func (e *Engine) Suspended(analyst string) bool {
	_, ok := e.suspended.Load(analyst)
	return ok
}

// suspension is the refusal of a suspended analyst's statements, or nil.
func (e *Engine) suspension(analyst string) error {
	reason, ok := e.suspended.Load(analyst)
	if !ok {
		return nil
	}
	return &pgerror.Error{Code: pgerror.InsufficientPrivilege,
		Message: fmt.Sprintf("analyst %q is suspended: the answers already released to this analyst determine an individual (%s)", analyst, reason),
		Hint:    "The data owner can see what with countwall audit risk; the suspension lasts until countwall restarts."}
}

// EachAudit streams the audit entries the filter selects, oldest first,
// once every entry queued so far is written (the risk monitor's read).
func (e *Engine) EachAudit(ctx context.Context, f state.AuditFilter, fn func(state.AuditEntry) error) error {
	e.state.Flush()
	return e.state.EachAudit(ctx, f, fn)
}

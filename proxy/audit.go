package proxy

import (
	"context"

	"countwall/mechanisms"
	"countwall/pgerror"
	"countwall/proxy/state"
	"countwall/proxy/state/release"
)

// auditRecord is one statement's outcome as the audit keeps it.
type auditRecord struct {
	analyst     string
	fingerprint string
	kind        release.Kind
	mechanism   string
	charge      mechanisms.Charge // what an answer cost
	released    released          // what an answered query sent
	err         error             // the refusal the analyst was sent; nil when answered
}

// entry is the record as the audit log writes it.
func (r auditRecord) entry() state.AuditEntry {
	e := state.AuditEntry{Analyst: r.analyst, Fingerprint: r.fingerprint, Kind: r.kind, Mechanism: r.mechanism}
	if r.err != nil {
		e.Outcome, e.SQLState, e.Reason = state.OutcomeRefused, outcome(r.err), r.err.Error()
		return e
	}
	e.Outcome = state.OutcomeAnswered
	if c := r.charge; c.Kind != mechanisms.AccountingNone {
		e.ChargeKind, e.Epsilon, e.Delta, e.Rho = string(c.Kind), c.Epsilon, c.Delta, c.Rho
	}
	rel := r.released
	e.Shape, e.Constants, e.Query, e.Cells = rel.shape, rel.constants, rel.query, rel.cells
	return e
}

// audit records a statement's outcome. A refusal is queued; an answer's
// entry is committed before audit returns (group commit with the answers of
// other sessions), or, under WithHeldAnswers, before the front end lets the
// answer leave, so that a crash never leaves the audit showing fewer
// answers than clients received.
func (e *Engine) audit(ctx context.Context, r auditRecord) error {
	entry := r.entry()
	if r.err != nil {
		if pe := pgerror.Public(r.err); pe.IsInternal() {
			e.logger.Error("internal error", "analyst", r.analyst, "fingerprint", r.fingerprint, "err", pe.Unwrap())
		}
		e.state.Audit(entry)
		return nil
	}
	if e.queueAnswerAudit {
		e.state.Audit(entry)
		return nil
	}
	if h := heldAnswers(ctx); h != nil {
		// The front end holds the answer and waits before it leaves.
		h.pending = append(h.pending, e.state.AuditLater(entry))
		return nil
	}
	// The wait is not cut short by the statement's deadline: the entry is
	// already on its way to disk, and the answer must not leave before it.
	return e.state.AuditDurable(context.WithoutCancel(ctx), entry)
}

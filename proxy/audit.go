package proxy

import (
	"context"

	"countwall/mechanisms"
	"countwall/pgerror"
	"countwall/proxy/state"
)

// answeredEntry is the audit entry of an answer and its charge.
func answeredEntry(analyst, fp, kind, mech string, charge mechanisms.Charge) state.AuditEntry {
	e := state.AuditEntry{Analyst: analyst, Fingerprint: fp, Kind: kind, Mechanism: mech, Outcome: state.OutcomeAnswered}
	if charge.Kind != mechanisms.AccountingNone {
		e.ChargeKind, e.Epsilon, e.Delta, e.Rho = string(charge.Kind), charge.Epsilon, charge.Delta, charge.Rho
	}
	return e
}

// audit records a statement's outcome. A refusal is queued; an answer's
// entry is committed before audit returns (group commit with the answers of
// other sessions), so that a crash never leaves the audit showing fewer
// answers than clients received.
func (e *Engine) audit(ctx context.Context, analyst, fp, kind, mech string, charge mechanisms.Charge, rel released, err error) error {
	entry := answeredEntry(analyst, fp, kind, mech, charge)
	entry.Shape, entry.Constants, entry.Query, entry.Cells = rel.shape, rel.constants, rel.query, rel.cells
	if err != nil {
		entry.ChargeKind, entry.Epsilon, entry.Delta, entry.Rho = "", 0, 0, 0
		entry.Outcome, entry.SQLState, entry.Reason = state.OutcomeRefused, outcome(err), err.Error()
		if pe := pgerror.Public(err); pe.IsInternal() {
			e.logger.Error("internal error", "analyst", analyst, "fingerprint", fp, "err", pe.Unwrap())
		}
		e.state.Audit(entry)
		return nil
	}
	if e.queueAnswerAudit {
		e.state.Audit(entry)
		return nil
	}
	// The wait is not cut short by the statement's deadline: the entry is
	// already on its way to disk, and the answer must not leave before it.
	return e.state.AuditDurable(context.WithoutCancel(ctx), entry)
}

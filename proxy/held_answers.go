package proxy

import (
	"context"

	"countwall/proxy/state"
)

// HeldAnswers lets a front end hold the answers it has not sent yet and
// wait for their audit rows together: Execute under a context from
// WithHeldAnswers queues an answer's row instead of waiting for its commit,
// and the front end calls Wait before any byte of those answers leaves.
// The wire does so for a connection's pipelined statements, so that their
// rows share one commit instead of one each. Not safe for concurrent use:
// one connection's statements run one at a time.
type HeldAnswers struct {
	pending []state.PendingAudit
}

type heldAnswersKey struct{}

// WithHeldAnswers is ctx under which Execute queues answers' audit rows in
// h instead of waiting for them.
func WithHeldAnswers(ctx context.Context, h *HeldAnswers) context.Context {
	return context.WithValue(ctx, heldAnswersKey{}, h)
}

// heldAnswers is the HeldAnswers of ctx, nil when answers are not held.
func heldAnswers(ctx context.Context) *HeldAnswers {
	h, _ := ctx.Value(heldAnswersKey{}).(*HeldAnswers)
	return h
}

// Held is how many answers wait for their audit rows.
func (h *HeldAnswers) Held() int { return len(h.pending) }

// Wait returns once every held answer's audit row is committed, with the
// first commit error: the answers must then not leave. The wait is not
// cut short by any statement's deadline: the rows are on their way to disk.
func (h *HeldAnswers) Wait() error {
	var first error
	for _, p := range h.pending {
		if err := p.Wait(context.Background()); err != nil && first == nil {
			first = err
		}
	}
	clear(h.pending)
	h.pending = h.pending[:0]
	return first
}

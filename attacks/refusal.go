package attacks

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"countwall/pgerror"
)

// IsBudgetExhausted reports whether err is the firewall's refusal for a spent
// privacy budget: the point where an attack must stop and report what it has.
func IsBudgetExhausted(err error) bool {
	return pgerror.SQLState(err) == pgerror.ConfigurationLimitExceeded
}

// WithHint adds to err the hint the firewall gave with its refusal (how an
// owner allows what was refused), which a driver's error text leaves out.
func WithHint(err error) error {
	if err == nil {
		return nil
	}
	var hint string
	var local interface{ HintText() string }
	var wire *pgconn.PgError
	switch {
	case errors.As(err, &wire):
		hint = wire.Hint
	case errors.As(err, &local):
		hint = local.HintText()
	}
	if hint == "" {
		return err
	}
	return fmt.Errorf("%w\nHINT: %s", err, hint)
}

// ErrInterrupted is what Logged answers once the run's context is
// cancelled (SIGINT or SIGTERM): the attack stops as at its query limit and
// keeps what it recovered.
var ErrInterrupted = errors.New("interrupted (SIGINT or SIGTERM)")

// Stopped reports whether err ends an attack early with what it has so far:
// a spent budget, the query limit the run was given, or an interrupt.
func Stopped(err error) bool {
	return IsBudgetExhausted(err) || errors.Is(err, ErrQueryLimit) || errors.Is(err, ErrInterrupted)
}

// interrupted wraps err as an interrupt when ctx was cancelled: a query cut
// off by Ctrl-C is no refusal by the firewall.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() == nil || errors.Is(err, ErrInterrupted) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx))
}

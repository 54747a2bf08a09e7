package attacks

import (
	"errors"

	"countwall/pgerror"
)

// IsBudgetExhausted reports whether err is the firewall's refusal for a spent
// privacy budget: the point where an attack must stop and report what it has.
func IsBudgetExhausted(err error) bool {
	return pgerror.SQLState(err) == pgerror.ConfigurationLimitExceeded
}

// Stopped reports whether err ends an attack early with what it has so far:
// a spent budget, or the query limit the run was given.
func Stopped(err error) bool {
	return IsBudgetExhausted(err) || errors.Is(err, ErrQueryLimit)
}

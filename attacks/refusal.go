package attacks

import "countwall/pgerror"

// IsBudgetExhausted reports whether err is the firewall's refusal for a spent
// privacy budget: the point where an attack must stop and report what it has.
func IsBudgetExhausted(err error) bool {
	return pgerror.SQLState(err) == pgerror.ConfigurationLimitExceeded
}

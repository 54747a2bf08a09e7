package attacks

// codeBudgetExhausted is PostgreSQL's configuration_limit_exceeded, which
// the firewall answers once an analyst's privacy budget is spent.
const codeBudgetExhausted = "53400"

// codeInvalidParameter is PostgreSQL's invalid_parameter_value, the answer to
// a SET outside the configured range.
const codeInvalidParameter = "22023"

// IsBudgetExhausted reports whether err is the firewall's refusal for a spent
// privacy budget: the point where an attack must stop and report what it has.
func IsBudgetExhausted(err error) bool { return SQLState(err) == codeBudgetExhausted }

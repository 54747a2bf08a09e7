package ir

// Accounting is the kind of privacy loss a mechanism claims per answer.
// Kinds are kept apart in the ledger: an IDP claim is not a DP charge.
type Accounting string

const (
	AccountingNone Accounting = ""
	AccountingDP   Accounting = "dp"
	AccountingIDP  Accounting = "idp"
	AccountingBDP  Accounting = "bdp"
)

// Charge is what answering a request costs under the mechanism's accounting.
type Charge struct {
	Kind    Accounting
	Epsilon float64
	Delta   float64
	// Rho is a zero-concentrated DP cost (Bun and Steinke 2016), charged to
	// the Kind's budget by summing rho and converting the sum to (epsilon,
	// delta) against the cap (see mechanisms.ZCDPEpsilon). Epsilon and Delta are then
	// usually 0.
	Rho float64
}

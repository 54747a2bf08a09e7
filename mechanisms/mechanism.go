// Package mechanisms holds the disclosure-control mechanisms countwall can
// answer through, and the registry that builds one from its config by name.
//
// A mechanism sees the planner's cells, never SQL or SQLite. It declares what
// it needs (Needs) so that the planner computes exactly that and no more.
package mechanisms

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"countwall/ir"
	"countwall/pgerror"
)

// Accounting and Charge are the vocabulary's (ir): the ledger, the config
// and the Engine speak them without importing the mechanisms. They keep
// their names here, where a mechanism declares and returns them.
type (
	Accounting = ir.Accounting
	Charge     = ir.Charge
)

// The accounting kinds.
const (
	AccountingNone = ir.AccountingNone
	AccountingDP   = ir.AccountingDP
	AccountingIDP  = ir.AccountingIDP
	AccountingBDP  = ir.AccountingBDP
)

// Request is one query to answer. Before the protected data is read (Price)
// it has no Result; Answer gets the same request with its Result.
type Request struct {
	Query *ir.Query
	// Table is the queried table's catalog entry: its columns, public
	// domains and policy, never its rows.
	Table *ir.Table
	// Bounds are the contribution bounds the store will enforce, planned from
	// the schema before the read (zero when the mechanism asks for none).
	Bounds ir.Bounds
	Result *ir.Result
	// Epsilon and Delta are the analyst's per-query budget share (SET epsilon,
	// SET delta), already checked against the configured range.
	Epsilon float64
	Delta   float64
}

// Answer is a mechanism's answer for one cell, in the order of Result.Cells.
type Answer struct {
	Int     int64   // the answer when !IsFloat
	Float   float64 // the answer when IsFloat
	IsFloat bool
	// Suppressed marks a cell whose published value stands in for a count the
	// mechanism withheld (published as 0; the front door sends it as NULL).
	// A mechanism that withholds small counts marks every 0 it publishes,
	// a noisy count taken to 0 included (withheldIfZero), so that the mark
	// says no more than the 0 does: the two must not be told apart.
	Suppressed bool
	// Dropped cells are left out of the output altogether.
	Dropped bool
	// Sums are, for a query with SUM or AVG, the published figures of each
	// summed column that SUM and AVG are computed from: a mechanism that
	// answers sums (SumAnswerer) sets them. A pointer keeps answers
	// comparable.
	Sums *Sums
}

// Sums are one cell's published sums: the figures of each column of
// Query.SumColumns that SUM and AVG are computed from (exact), or each
// aggregate's published value (Aggregates).
type Sums struct {
	Columns []ir.SumValue
	// Aggregates, when set, are the published value of each aggregate of
	// Query.Aggregates, in select-list order, by a mechanism that noises
	// SUM and AVG: float8, never NULL. A COUNT's place holds the count the
	// answer's Int publishes.
	Aggregates []float64
	// avgParts are an AVG's two noisy figures, its count of values and its
	// normalized sum, by the AVG's place in Aggregates: never published,
	// they give the AVG's interval.
	avgParts map[int][2]float64
}

// Mechanism answers cells. Implementations are safe for concurrent use.
type Mechanism interface {
	// Name is the registry name ("exact", "cellkey", ...).
	Name() string
	// Needs is what the planner must compute for every cell.
	Needs() ir.Needs
	// Answer returns one Answer per cell of req.Result, and the charge the
	// answer costs. A mechanism that cannot answer (for example a DP mechanism
	// asked for a GROUP BY without a declared domain) returns a *pgerror.Error.
	Answer(ctx context.Context, req *Request) ([]Answer, Charge, error)
}

// The optional capabilities of a mechanism, each a small interface the
// firewall asks for where it needs it.

// Pricer is implemented by every mechanism that can refuse a request or
// charge for it. Price runs before the protected data is read, from the
// query, the schema and the budget share alone, so that no refusal and no
// charge can depend on one person's rows; the firewall charges the returned
// Charge durably, and only then reads the data and calls Answer. Answer must
// then neither refuse what Price accepted nor charge differently: only an
// internal failure may still stop it.
//
// A mechanism that charges a budget (Accounter) must implement Pricer: the
// Engine refuses to run one that does not.
type Pricer interface {
	Price(req *Request) (Charge, error)
}

// ShareChecker is implemented by mechanisms that use the analyst's budget
// share: CheckShare refuses a share the mechanism cannot honour, so that SET
// epsilon and SET delta refuse it at once rather than at the next query.
type ShareChecker interface {
	CheckShare(epsilon, delta float64) error
}

// Describer is implemented by mechanisms that can state their claim and,
// where the config's publish_parameters allows, their parameters. SHOW
// mechanism shows it.
type Describer interface {
	Describe() string
}

// Accounter is implemented by mechanisms that charge a privacy budget: it
// names the kind their charges go to.
type Accounter interface {
	Accounting() Accounting
}

// FloatOutputer is implemented by mechanisms whose answers are real numbers
// (the answer column is float8 rather than int8).
type FloatOutputer interface {
	FloatOutput() bool
}

// GroupDropper is implemented by mechanisms that leave low counts out of a
// GROUP BY altogether. Only they may answer a GROUP BY over a column without
// a declared public domain: for any other, the set of rows returned would
// itself reveal which groups exist, however the counts are protected.
type GroupDropper interface {
	DropsLowCounts() bool
}

// ContributionBounder is implemented by mechanisms that ask the planner for
// counts bounded per privacy unit (Needs.Bound); ContributionBounds are the
// mechanism's overrides of the tables' bounds (zero fields keep the table's).
type ContributionBounder interface {
	ContributionBounds() ir.Bounds
}

// SumAnswerer is implemented by mechanisms that answer SUM and AVG beside
// COUNT: Answer then fills each answer's Sums.
type SumAnswerer interface {
	AnswersSums() bool
}

// FloatSums reports whether m publishes SUM and AVG as noisy real numbers
// (Sums.Aggregates): their columns are float8 whatever the summed column.
func FloatSums(m Mechanism) bool {
	f, ok := m.(interface{ FloatSums() bool })
	return ok && f.FloatSums()
}

// sumRefuser is implemented by mechanisms that refuse SUM and AVG for a
// reason of their own, which the refusal states.
type sumRefuser interface {
	refuseSums() error
}

// AnswersSums reports whether m answers SUM and AVG.
func AnswersSums(m Mechanism) bool {
	s, ok := m.(SumAnswerer)
	return ok && s.AnswersSums()
}

// Price is what a request will cost under m, checked before the data is
// read: the zero Charge for a mechanism that neither refuses nor charges.
// A query with SUM or AVG is refused (0A000) under a mechanism that does not
// answer them.
func Price(m Mechanism, req *Request) (Charge, error) {
	if r, ok := m.(sumRefuser); ok && req.Query != nil && req.Query.HasSums() {
		return Charge{}, r.refuseSums()
	}
	if req.Query != nil && req.Query.HasSums() && !AnswersSums(m) {
		return Charge{}, pgerror.Errorf(pgerror.FeatureNotSupported, "mechanism %s does not answer SUM/AVG yet", m.Name()).
			WithHint("SUM and AVG are answered under the exact mechanism; ask COUNT(*) under this one")
	}
	if p, ok := m.(Pricer); ok {
		return p.Price(req)
	}
	return Charge{}, nil
}

// CheckShare refuses a per-query budget share that m cannot use.
func CheckShare(m Mechanism, epsilon, delta float64) error {
	if c, ok := m.(ShareChecker); ok {
		return c.CheckShare(epsilon, delta)
	}
	return nil
}

// RhoCharger is implemented by mechanisms whose charges are zCDP rho, which
// the ledger converts to epsilon at the delta cap (gaussian).
type RhoCharger interface {
	ChargesRho() bool
}

// ChargesRho reports whether m charges zCDP rho.
func ChargesRho(m Mechanism) bool {
	r, ok := m.(RhoCharger)
	return ok && r.ChargesRho()
}

// Accounts reports whether m charges a budget.
func Accounts(m Mechanism) bool {
	a, ok := m.(Accounter)
	return ok && a.Accounting() != AccountingNone
}

// DropsLowCounts reports whether a mechanism drops low-count groups.
func DropsLowCounts(m Mechanism) bool {
	d, ok := m.(GroupDropper)
	return ok && d.DropsLowCounts()
}

// FloatOutput reports whether a mechanism's answers are real numbers.
func FloatOutput(m Mechanism) bool {
	f, ok := m.(FloatOutputer)
	return ok && f.FloatOutput()
}

// Params are a mechanism's parameters as read from the config.
type Params map[string]any

// Env is what a mechanism may be given by the firewall when it is built.
type Env struct {
	// Seed, when non-zero, makes fresh randomness reproducible (tests only).
	Seed int64
	// Secret is the firewall secret, for mechanisms whose sticky noise must not
	// be predictable by analysts (layered seeds). Never log or publish it.
	Secret []byte
}

// Factory builds a mechanism from its parameters. Errors name the parameter.
type Factory func(p Params, env Env) (Mechanism, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
)

// Register makes a mechanism available by name. It is called from init
// functions; registering a name twice is a programming error.
func Register(name string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("mechanisms: Register called twice for " + name)
	}
	registry[name] = f
}

// New builds the named mechanism.
func New(name string, p Params, env Env) (Mechanism, error) {
	registryMu.RLock()
	f, ok := registry[name]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown mechanism %q (known: %v)", name, Names())
	}
	if p == nil {
		p = Params{}
	}
	return f(p, env)
}

// Names lists the registered mechanisms, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// withheldIfZero is a published count n of a mechanism that withholds small
// counts: marked withheld when it is 0, like the counts it withholds.
func withheldIfZero(n int64) Answer {
	if n == 0 {
		return Answer{Suppressed: true}
	}
	return Answer{Int: n}
}

package ir

// Derived is a predicate kind defined by what it means in the other kinds:
// every backend, and the condition list, evaluates its Lower unless it
// knows the kind itself. Such a kind is one file: its type, which embeds
// Derivation, and its Lower. A kind that needs an evaluation of its own
// (an index, a function the SQL lacks) adds a case to each backend instead;
// docs/architecture.md, "Where things live", lists the files.
type Derived interface {
	Pred
	// Lower is the predicate in the kinds the backends evaluate; it may be
	// called more than once and must give the same predicate each time.
	Lower() Pred
}

// Derivation, embedded, makes a type declared outside this package a Pred.
type Derivation struct{}

func (Derivation) pred() {}

package ir

// The description of the grouped stand-in (planner/grouped), which the
// Engine takes in its options in place of the configured database: a table
// held as the groups of a few columns, each with its row count and the sum
// of its record keys. The papers' experiments and the attacks' tests build
// one; only the Engine turns it into a backend.

// KeyModel says how the contributor key of a query's cell is formed from
// the groups it sums.
type KeyModel int

const (
	// AdditiveKeys sums the selected groups' keys mod 2^32, as every backend
	// does.
	AdditiveKeys KeyModel = iota
	// IndependentKeys draws a key per distinct contributor set from a keyed
	// hash of the set: the model of Asghar and Kaafar's Algorithm 1, in
	// which different contributor sets draw independent noise.
	IndependentKeys
)

func (m KeyModel) String() string {
	if m == IndependentKeys {
		return "independent"
	}
	return "additive"
}

// GroupedColumn is one grouped column.
type GroupedColumn struct {
	Name string
	Type ColumnType // TypeInt or TypeText
}

// Group is the rows sharing one combination of the grouped columns' values.
type Group struct {
	Values []any  // int64 for TypeInt columns, string for TypeText, in column order
	Count  int64  // rows (privacy units) in the group
	Key    uint32 // sum of the group's record keys mod 2^32
}

// GroupedTable is a protected table held as groups.
type GroupedTable struct {
	Name    string
	Unit    string          // the privacy-unit column's name (each row is its own unit)
	Columns []GroupedColumn // the grouped columns, in the order of Group.Values
	Groups  []Group
	Model   KeyModel
	Seed    uint64 // keys the IndependentKeys model's hash (ignored by AdditiveKeys)
}

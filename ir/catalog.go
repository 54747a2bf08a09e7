package ir

// ColumnType is the declared affinity of a protected column.
type ColumnType int

const (
	TypeInt ColumnType = iota
	TypeReal
	TypeText
)

func (t ColumnType) String() string {
	switch t {
	case TypeInt:
		return "integer"
	case TypeReal:
		return "real"
	default:
		return "text"
	}
}

// Domain is a column's public domain: the categories or the integer range that
// may be published without looking at the data. A GROUP BY over columns that
// all have a domain answers every cell of the domain product.
type Domain struct {
	Categories []string // text categories, in output order
	Min, Max   int64    // integer range, inclusive, when Categories is nil
	IsRange    bool
}

// Size is the number of cells in the domain.
func (d *Domain) Size() int64 {
	if d.IsRange {
		return d.Max - d.Min + 1
	}
	return int64(len(d.Categories))
}

// Column is a protected column.
type Column struct {
	Name   string
	Type   ColumnType
	Domain *Domain // nil when none is declared
	// Bounds are the column's declared public value bounds (nil when none
	// is declared), for the mechanisms that clamp what they sum.
	Bounds *ValueBounds
}

// Table is a protected table as the catalog knows it.
type Table struct {
	Name        string
	PrivacyUnit string             // column identifying the contributor
	Columns     map[string]*Column // every column analysts may use, by lower-case name
	Policy      Policy
	// Bounds are the contribution bounds of the table's privacy units, for
	// mechanisms that ask for bounded counts; zero fields take DefaultBounds.
	Bounds Bounds
	// UnitKeyed is the config's declaration that each row has its own unit
	// (checked by CheckUnitKeyed): bounds then change no count, and the
	// snapshot may answer bounded queries and count units without a set.
	UnitKeyed bool
}

// Policy is the set of knobs that decide which queries a table accepts.
type Policy struct {
	UnitInWhere   bool // the privacy-unit column may appear in WHERE
	MaxInList     int  // longest IN list
	MaxConditions int  // most leaf conditions in WHERE
	MaxGroups     int  // most output cells of a GROUP BY
	AllowOr       bool
	AllowNotEqual bool // <>, !=, NOT IN, NOT BETWEEN, NOT LIKE
	AllowLike     bool
	AllowMath     bool
	// Strict is the pg_diffix untrusted profile: only AND-ed equalities (and
	// IS NULL); it overrides AllowOr, AllowNotEqual, AllowLike and AllowMath.
	Strict bool
	// MaxStatementBytes bounds the SQL text length.
	MaxStatementBytes int
}

// DefaultPolicy is what a table gets when the config says nothing.
func DefaultPolicy() Policy {
	return Policy{
		MaxInList:         50,
		MaxConditions:     20,
		MaxGroups:         10000,
		AllowOr:           true,
		AllowNotEqual:     true,
		AllowLike:         false,
		AllowMath:         false,
		MaxStatementBytes: 8192,
	}
}

// Catalog is the set of protected tables, by lower-case name.
type Catalog struct {
	Tables map[string]*Table
}

// ColumnInfo is one column of a stored table as the protected database declares it.
type ColumnInfo struct {
	Name string
	Type ColumnType
}

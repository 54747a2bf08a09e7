package ir

// Needs says what a mechanism needs the planner to compute for each cell.
// Count is always computed; the rest cost extra work and are computed only
// when asked for.
type Needs struct {
	Units      bool // distinct privacy units per cell
	Key        bool // contributor key per cell (implies a per-unit pass)
	TableSize  bool // rows in the whole table
	Conditions bool // the normalised condition list
	// Bound asks for counts bounded per privacy unit (see Bounds): the table's
	// bounds, with the non-zero fields of Bounds in their place.
	Bound  bool
	Bounds Bounds
	// GroupLimit, when positive, replaces the table's max_groups as the most
	// groups a GROUP BY without declared domains may find. A mechanism that
	// drops low counts needs every group before it drops, so that no refusal
	// depends on a group it would drop; the firewall then shows at most
	// max_groups of the groups it releases.
	GroupLimit int
	// Oblivious asks that the work of computing the cells depend on the
	// statement, the config, the schema and the table's size only, never on
	// which values the rows hold or how often: the firewall sets it under
	// every mechanism that claims a privacy loss, whose claim would
	// otherwise not cover the time a statement takes.
	Oblivious bool
	// Clamp asks, for a query with sums, for each summed column's sum of
	// values clamped to its declared bounds (SumValue.Clamped): the
	// planner refuses a column without bounds before the read.
	Clamp bool
	// Contributions asks, for a query with sums, for each privacy unit's
	// total of clamped values per cell and summed column
	// (SumValue.Contributions), the largest TopContributions of them when
	// that is positive: what dominance, the p% rule, the cell key method for
	// magnitudes and per-person contribution bounding read. It implies
	// Clamp.
	Contributions    bool
	TopContributions int
	// Units and Key are computed for a query with sums too, from the same
	// per-unit pass, so that a mechanism's count beside a SUM gets the
	// noise the same count gets alone; Bound is not (yet).
}

// Cell is one output cell of a query.
type Cell struct {
	Group []GroupValue // group column values, in GroupBy order
	Count int64        // rows matching (or distinct units for COUNT(DISTINCT unit))
	Units int64        // distinct privacy units contributing (when Needs.Units or Needs.Key)
	Key   uint32       // contributor key: sum of record keys mod 2^32 (when Needs.Key)
	// InDomain is false for a cell whose group value lies outside a declared
	// public domain; such cells are never output for domain-complete queries.
	InDomain bool
	// Sums are the figures of each summed column of a query with sums, in
	// Query.SumColumns order (nil for a COUNT query).
	Sums []SumValue
}

// GroupValue is one group column's value rendered as text; Null marks SQL NULL.
type GroupValue struct {
	Text string
	Null bool
}

// Result is what the planner hands a mechanism.
type Result struct {
	Cells      []Cell
	TableSize  int64    // when Needs.TableSize
	Conditions []string // when Needs.Conditions: normalised, sorted, one per leaf
	// DomainComplete is true when every GROUP BY column has a declared domain and
	// Cells holds every cell of the domain product (zero cells included).
	DomainComplete bool
	// Bounds are the contribution bounds the counts were computed under
	// (when Needs.Bound): C rows per unit per cell, G cells per unit, G
	// lowered to the number of cells where that is smaller.
	Bounds Bounds
	// Path names what computed the cells (PathSnapshot, PathSQLite or
	// PathPostgres), so that tests can check that it follows the config and
	// the schema, never the rows.
	Path string
}

// The paths that compute cells.
const (
	PathSnapshot = "snapshot"
	PathSQLite   = "sqlite"
	PathPostgres = "postgres"
	PathGrouped  = "grouped" // the stand-in of the papers' experiments (planner/grouped)
)

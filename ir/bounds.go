package ir

// Bounds limit what one privacy unit may contribute to a query, so that a
// noise mechanism can be calibrated to a person rather than to a row (as
// Google's DP SQL, SmartNoise SQL and PipelineDP do).
type Bounds struct {
	// MaxRowsPerUnit (C) is how many rows of one unit a cell may count.
	MaxRowsPerUnit int64
	// MaxGroupsPerUnit (G) is how many cells of one query one unit may
	// contribute to.
	MaxGroupsPerUnit int64
}

// DefaultBounds are a table's bounds when the config names none: one row and
// one cell per unit, so that a unit moves at most one count by one.
func DefaultBounds() Bounds { return Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1} }

// override returns b with the non-zero fields of o put in their place.
func (b Bounds) override(o Bounds) Bounds {
	if o.MaxRowsPerUnit > 0 {
		b.MaxRowsPerUnit = o.MaxRowsPerUnit
	}
	if o.MaxGroupsPerUnit > 0 {
		b.MaxGroupsPerUnit = o.MaxGroupsPerUnit
	}
	return b
}

// ContributionBounds are the table's bounds with the non-zero fields of
// override in their place, defaults where neither names one: what a bounded
// query on t enforces before G is lowered to the number of cells.
func (t *Table) ContributionBounds(override Bounds) Bounds {
	return DefaultBounds().override(t.Bounds).override(override)
}

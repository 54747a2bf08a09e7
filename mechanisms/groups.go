package mechanisms

// GroupDropper is implemented by mechanisms that leave low counts out of a
// GROUP BY altogether. Only they may answer a GROUP BY over a column without
// a declared public domain: for any other, the set of rows returned would
// itself reveal which groups exist, however the counts are protected.
type GroupDropper interface {
	DropsLowCounts() bool
}

// DropsLowCounts reports whether a mechanism drops low-count groups.
func DropsLowCounts(m Mechanism) bool {
	d, ok := m.(GroupDropper)
	return ok && d.DropsLowCounts()
}

// DropsLowCounts is true in drop mode.
func (m *suppress) DropsLowCounts() bool { return m.drop }

// DropsLowCounts is true: the noisy low-count filter drops groups whose
// domain is not declared.
func (*layered) DropsLowCounts() bool { return true }

package risk

// A column's declared domain (the config's tables.T.domains) is public,
// and the threshold searches rely on it: a search over [min, max] counts
// its first value with `col < second` and its last with `col >= last`,
// ranges open at the domain's ends. Read as they are written, such a
// range holds values no row has (below min, above max), and a row rebuilt
// from it stays unpinned on that column unless some answer says the end is
// empty (the attack's domain check, which it asks only of the target). A
// declared domain's ends are read as closed instead: the column's values
// are cut at min and just after max (a text domain at each of its
// categories, which are then the column's only values), and a box holds,
// for that column, only the atoms inside the domain.

// Domain is a column's declared domain: text categories, or the integers
// Min..Max (inclusive) when Categories is nil.
type Domain struct {
	Categories []string
	Min, Max   int64
}

// domainOf is the declared domain of a table's column, nil when none.
func (o Options) domainOf(table, col string) *Domain {
	if d, ok := o.Domains[table][col]; ok {
		return &d
	}
	return nil
}

// domainEdges are the cuts a declared domain adds to a column of its kind
// (text or integer): nil when the kinds differ.
func (d *Domain) domainEdges(text bool) []edge {
	if text != (d.Categories != nil) {
		return nil
	}
	if !text {
		if d.Max < d.Min || d.Max == 1<<63-1 {
			return nil
		}
		return []edge{{num: d.Min}, {num: d.Max + 1}}
	}
	var out []edge
	for _, c := range d.Categories {
		out = append(out, edge{text: c}, *after(&edge{text: c}, true))
	}
	return out
}

// setDomain marks on x the atoms of its declared domain, once its cuts are
// made: the atom that starts at the least value up to the one that starts
// just after the greatest.
func (x *axis) setDomain(d *Domain) {
	if d == nil || d.domainEdges(x.text) == nil {
		return
	}
	lo, hi := &edge{num: d.Min}, after(&edge{num: d.Max}, false)
	if x.text {
		first, last := d.Categories[0], d.Categories[0]
		for _, c := range d.Categories {
			first, last = min(first, c), max(last, c)
		}
		lo, hi = &edge{text: first}, after(&edge{text: last}, true)
	}
	x.domain = atomSet{x.index(lo, 0), x.index(hi, x.atoms())}
}

// whole is every atom of the column a row may hold: its declared domain's,
// or all of them.
func (x *axis) whole() atomSet {
	if x.domain != nil {
		return x.domain
	}
	return atomSet{0, x.atoms()}
}

// closed is set without the atoms outside the column's declared domain.
func (x *axis) closed(set atomSet) atomSet {
	if x.domain == nil {
		return set
	}
	return set.intersect(x.domain)
}

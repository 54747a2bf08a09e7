package risk

// interned are the ids of the splitter's families, columns and column
// sets: a search repeats a few hundred thousand column sets over millions
// of boxes, each kept once here.
type interned struct {
	families []familyOf
	sets     []internedSet
	columns  []string // by id
	ids      map[string]uint32
	buf      []byte
}

// familyOf is a family's text (its table and the conditions left as
// written) and its table.
type familyOf struct{ name, table string }

// internedSet is a column set with its column's id.
type internedSet struct {
	colSet
	column uint32
}

func newInterned() interned { return interned{ids: map[string]uint32{}} }

// family is the id of a family of table.
func (in *interned) family(name, table string) uint32 {
	in.buf = append(append(in.buf[:0], "family "...), name...)
	id, ok := in.ids[string(in.buf)]
	if !ok {
		id = uint32(len(in.families))
		in.families = append(in.families, familyOf{name, table})
		in.ids[string(in.buf)] = id
	}
	return id
}

// column is the id of a column.
func (in *interned) column(col string) uint32 {
	in.buf = append(append(in.buf[:0], "column "...), col...)
	id, ok := in.ids[string(in.buf)]
	if !ok {
		id = uint32(len(in.columns))
		in.columns = append(in.columns, col)
		in.ids[string(in.buf)] = id
	}
	return id
}

// set is the id of a column's set, made when new.
func (in *interned) set(col string, set atomSet) uint32 {
	if id, ok := in.lookupSet(col, set); ok {
		return id
	}
	id := uint32(len(in.sets))
	in.sets = append(in.sets, internedSet{colSet{col, set}, in.column(col)})
	in.ids[string(in.setKey(col, set))] = id
	return id
}

// lookupSet is the id of a column's set, if it was made.
func (in *interned) lookupSet(col string, set atomSet) (uint32, bool) {
	id, ok := in.ids[string(in.setKey(col, set))]
	return id, ok
}

func (in *interned) setKey(col string, set atomSet) []byte {
	in.buf = set.appendKey(append(append(append(in.buf[:0], "set "...), col...), ':'))
	return in.buf
}

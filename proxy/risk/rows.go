package risk

import (
	"encoding/binary"
	"fmt"
	"iter"
	"math"
	"slices"
	"sort"
)

// splitAll relates each box of g with the smallest box of g that holds
// it (its parent in the search's halving), and the rest, when the box is a
// prefix or a suffix of it. Only the nearest parent: relating every pair
// would derive the differences of differences, without end.
func (s *splitter) splitAll(anchor *box, pos int) {
	ms := s.members(anchor, pos)
	if len(ms) > maxGroup {
		return
	}
	set := s.ids.sets[s.partsOf(anchor)[pos]]
	full := s.sp.axis(s.ids.families[anchor.family].table, set.col).whole()
	whole := s.lookup(anchor.family, s.partsOf(anchor), pos)
	for j := 0; j < len(ms); j++ {
		inner := s.boxAt(ms[j])
		inSet := s.setAt(inner, pos)
		if inner.bad || len(inSet) == 0 || (inner.lo == 0 && math.IsInf(inner.hi, 1)) {
			continue
		}
		var outer *box
		var outSet atomSet
		consider := func(b *box, set atomSet) {
			if b == nil || b == inner || b.bad || math.IsInf(b.hi, 1) || size(set) <= size(inSet) ||
				(outer != nil && size(set) >= size(outSet)) || !set.covers(inSet) {
				return
			}
			outer, outSet = b, set
		}
		consider(whole, full)
		for _, id := range ms {
			b := s.boxAt(id)
			consider(b, s.setAt(b, pos))
		}
		if outer == nil {
			continue
		}
		rest := outSet.minus(inSet)
		if !apart(inSet, rest) {
			continue
		}
		restID := s.ids.set(set.col, rest)
		other := s.memberWith(ms, pos, restID)
		if other == nil {
			other = s.box(inner.family, s.withPart(s.partsOf(inner), pos, restID))
			ms = s.members(anchor, pos) // other joined them
		}
		s.relate(outer, inner, other)
	}
}

// memberWith is the member whose set at pos is the set of that id, nil if
// none.
func (s *splitter) memberWith(ms []uint32, pos int, id uint32) *box {
	for _, m := range ms {
		if b := s.boxAt(m); s.partsOf(b)[pos] == id {
			return b
		}
	}
	return nil
}

// setAt is b's set of its column parts[pos].
func (s *splitter) setAt(b *box, pos int) atomSet { return s.ids.sets[s.partsOf(b)[pos]].set }

// withPart is parts with the pos-th replaced by id, in s.buf.
func (s *splitter) withPart(parts []uint32, pos int, id uint32) []uint32 {
	s.buf = append(s.buf[:0], parts...)
	s.buf[pos] = id
	return s.buf
}

// lookup is the box of a family's parts but the skip-th, nil if none.
func (s *splitter) lookup(family uint32, parts []uint32, skip int) *box {
	q := boxKey(family, parts, skip)
	if _, e, ok := s.find(&s.boxIndex, &q); ok {
		return s.boxAt(slotPayload(e))
	}
	return nil
}

// colOf is b's set of col, nil if b leaves col open.
func (s *splitter) colOf(b *box, col string) atomSet {
	for _, p := range s.partsOf(b) {
		if c := s.ids.sets[p]; c.col == col {
			return c.set
		}
	}
	return nil
}

// size is how many atoms a set holds.
func size(s atomSet) int32 {
	n := int32(0)
	for i := 0; i < len(s); i += 2 {
		n += s[i+1] - s[i]
	}
	return n
}

// evidenceOf is every answer the boxes' counts rest on, through the boxes
// they were derived from.
func (s *splitter) evidenceOf(bs ...*box) []int64 {
	seen := map[uint32]bool{}
	ids := map[int64]bool{}
	var stack []uint32
	for _, b := range bs {
		stack = append(stack, b.id)
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[x] {
			continue
		}
		seen[x] = true
		for at := s.boxAt(x).evidence; at != 0; {
			l := s.links.at(at)
			if l.box {
				stack = append(stack, uint32(l.id))
			} else {
				ids[l.id] = true
			}
			at = l.next
		}
	}
	out := make([]int64, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// rows reports the rows a threshold search over every column rebuilt
// (idp-reconstruct): the boxes whose count the answers and their splits
// determine, at least 1, every column they constrain pinned to one value
// (a column's end, below its lowest or above its highest constant, left
// out where a box holding it was answered empty: the attack's domain
// check), and not split further by a determined box. A row of more than
// MaxCell people is reported when it pins every column the analyst
// constrained in the table. A box of one person that pins one column
// beside the target's conditions is that person's value of the column
// (idp-attribute: attribute inference).
func rows(each iter.Seq[answer], sp func() *space, o Options) []Finding {
	s := newSplitter(each, sp(), o)
	s.run()
	found := s.found()
	var out []Finding
	for _, r := range found {
		table := s.ids.families[r.b.family].table
		if r.refined >= r.b.lo || (r.b.lo > o.MaxCell && len(r.parts) < s.sp.columns(table)) {
			continue
		}
		pattern := "row reconstruction"
		if r.values == 1 {
			pattern = "attribute inference"
		}
		cols := make([]colSet, len(r.parts))
		for i, p := range r.parts {
			cols[i] = s.ids.sets[p].colSet
		}
		f := finding(pattern, table, s.sp.renderRow(table, cols), r.b.lo, s.evidenceOf(append(r.ends, r.b)...))
		f.Individual = r.b.lo == 1
		out = append(out, f)
	}
	return out
}

// foundRow is a box read as a row: its column sets' ids.
type foundRow struct {
	b     *box
	parts []uint32
	ends  []*box // the empty boxes that pinned its columns' ends
	// values is how many of its columns it pins to one value (the others
	// are at the target's set).
	values int
	// refined is how many of its rows its children hold (a parent is
	// left for its children once they hold all its rows).
	refined float64
}

// found are the boxes that read as rows, once each, with the rows their
// children hold.
func (s *splitter) found() []foundRow {
	ends, targets := s.emptyEnds(), s.targets()
	var found []foundRow
	seen := map[string]int{} // a row's place in found, by its key
	for id := range s.boxes.n {
		b := s.boxAt(id)
		// The target itself is the threshold search's finding.
		if !b.pinned() || b.lo < 1 || b.nparts < 2 || b == targets[b.family] {
			continue
		}
		parts, empty, values := s.points(b, targets[b.family], ends)
		// One column at one value in a target of one person is that
		// person's value (idp-attribute's search); a row needs two.
		if values < 2 && (values < 1 || b.lo != 1) {
			continue
		}
		// The same row may be boxed with and without its empty ends.
		k := s.rowKey(b.family, parts)
		if _, ok := seen[k]; ok {
			continue
		}
		seen[k] = len(found)
		found = append(found, foundRow{b: b, parts: parts, ends: empty, values: values})
	}
	// A row's parent has one column fewer, or that column at the target's
	// set (a search that goes on to split a target column).
	parent := func(b *box, parts []uint32) {
		if i, ok := seen[s.rowKey(b.family, parts)]; ok {
			found[i].refined += b.lo
		}
	}
	for _, r := range found {
		t := targets[r.b.family]
		for i, p := range r.parts {
			parent(r.b, without(r.parts, i))
			c := s.ids.sets[p]
			if ts := s.colOfOrNil(t, c.col); ts != nil && !slices.Equal(ts, c.set) {
				parent(r.b, s.withPart(r.parts, i, s.ids.set(c.col, ts)))
			}
		}
	}
	return found
}

// colOfOrNil is colOf, nil for no box.
func (s *splitter) colOfOrNil(b *box, col string) atomSet {
	if b == nil {
		return nil
	}
	return s.colOf(b, col)
}

// rowKey is a row's key: its family's and its column sets' ids.
func (s *splitter) rowKey(family uint32, parts []uint32) string {
	b := binary.LittleEndian.AppendUint32(make([]byte, 0, 4*(len(parts)+1)), family)
	for _, p := range parts {
		b = binary.LittleEndian.AppendUint32(b, p)
	}
	return string(b)
}

// endKey names a column's end atom in a family.
type endKey struct {
	family, column uint32
	atom           int32
}

// emptyEnds are the boxes answered (or derived) empty whose set for a
// column is that column's end atom alone, by that atom, those with the
// fewest columns (the attack's domain check: the target and the end)
// first.
func (s *splitter) emptyEnds() map[endKey][]*box {
	out := map[endKey][]*box{}
	for id := range s.boxes.n {
		b := s.boxAt(id)
		if !b.pinned() || b.lo != 0 {
			continue
		}
		for _, p := range s.partsOf(b) {
			c := s.ids.sets[p]
			top := s.sp.axis(s.ids.families[b.family].table, c.col).atoms() - 1
			for _, end := range []int32{0, top} {
				if len(c.set) == 2 && c.set[0] == end && c.set[1] == end+1 {
					k := endKey{b.family, c.column, end}
					out[k] = append(out[k], b)
				}
			}
		}
	}
	for _, zs := range out {
		sort.SliceStable(zs, func(i, j int) bool { return zs[i].nparts < zs[j].nparts })
	}
	return out
}

// maxEndChecks bounds the empty boxes tried for one end of one row: the
// domain check is among the first, and a search leaves thousands of
// empty ends in contexts of their own.
const maxEndChecks = 8

// targets is, per family, the column sets of the largest cell with at
// least one condition whose count is determined: the search's target,
// whose conditions (zip <= 2009) a row keeps as they are.
func (s *splitter) targets() map[uint32]*box {
	out := map[uint32]*box{}
	for id := range s.boxes.n {
		b := s.boxAt(id)
		if t := out[b.family]; b.pinned() && b.nparts > 0 && (t == nil || b.lo > t.lo) {
			out[b.family] = b
		}
	}
	return out
}

// points is b's column sets with the end atoms an empty box holds taken
// out, if every one is then a single value, or its target's set, those
// empty boxes, and how many single values there are (0: not a row).
func (s *splitter) points(b, target *box, ends map[endKey][]*box) ([]uint32, []*box, int) {
	out := slices.Clone(s.partsOf(b))
	var empty []*box
	values := 0
	for i, p := range s.partsOf(b) {
		c := s.ids.sets[p]
		if target != nil && target != b && slices.Equal(s.colOf(target, c.col), c.set) {
			continue
		}
		values++
		x := s.sp.axis(s.ids.families[b.family].table, c.col)
		inner := c.set.minus(atomSet{0, 1, x.atoms() - 1, x.atoms()})
		if len(inner) != 2 || inner[1] != inner[0]+1 {
			return nil, nil, 0
		}
		if _, ok := x.point(inner[0]); !ok {
			return nil, nil, 0
		}
		for _, end := range []int32{0, x.atoms() - 1} {
			atom := atomSet{end, end + 1}
			if !c.set.covers(atom) {
				continue
			}
			z := s.emptyEnd(b, i, atom, ends[endKey{b.family, c.column, end}])
			if z == nil {
				return nil, nil, 0
			}
			empty = append(empty, z)
		}
		out[i] = s.ids.set(c.col, inner)
	}
	return out, empty, values
}

// emptyEnd is a box answered empty that holds b's rows whose col value is
// in atom: b's own box with col narrowed to it, or one of zs.
func (s *splitter) emptyEnd(b *box, pos int, atom atomSet, zs []*box) *box {
	col := s.ids.sets[s.partsOf(b)[pos]].col
	if id, ok := s.ids.lookupSet(col, atom); ok {
		if z := s.lookup(b.family, s.withPart(s.partsOf(b), pos, id), -1); z != nil && z.pinned() && z.lo == 0 {
			return z
		}
	}
	for i, z := range zs {
		if i == maxEndChecks {
			break
		}
		if s.holds(z, b, col) {
			return z
		}
	}
	return nil
}

// holds says whether box z holds every row of b whose col value is in z's
// set for col: z constrains no column that b leaves open, and no wider.
func (s *splitter) holds(z, b *box, col string) bool {
	for _, p := range s.partsOf(z) {
		zc := s.ids.sets[p]
		if zc.col == col {
			continue
		}
		bs := s.colOf(b, zc.col)
		if bs == nil || !zc.set.covers(bs) {
			return false
		}
	}
	return true
}

// apart says whether every atom of a lies below every atom of b, or every
// atom above.
func apart(a, b atomSet) bool {
	return a[len(a)-1] <= b[0] || b[len(b)-1] <= a[0]
}

// distinct drops the finding another solver made of a cell (read as a
// box of sp) that a rebuilt row also determines, to the same value: the
// row, which rests on more, takes its place.
func distinct(fs []Finding, sp *space) []Finding {
	at := map[string]int{}
	key := func(f Finding) string {
		family, cols := sp.boxOf(f.Table, f.conj)
		return fmt.Sprintf("%s|%g|%g|%t", colsKey(family, cols), f.Value, f.Error, f.AtLeast)
	}
	var out []Finding
	for _, f := range fs {
		switch {
		case f.Parameter != "" || len(f.Cell) == 0:
		case f.Pattern != "row reconstruction":
			at[key(f)] = len(out)
		default:
			if i, ok := at[key(f)]; ok {
				out[i] = f
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

package risk

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
)

// box is a cell read by columns (boxes.go) with what the answers say of
// its count: [lo, hi], narrowed by its own answers and by the counts of
// the boxes it adds up with.
type box struct {
	family string
	table  string
	cols   []colSet
	key    uint32 // the packed key's id (splitter.keys)
	lo, hi float64
	// own are the answers that narrowed the box, from the boxes whose
	// counts did (through a split).
	own    []int64
	from   []*box
	groups []*splitGroup
	// wholeOf are the groups whose whole the box is, in the order made.
	wholeOf []*splitGroup
	// bad says the answers contradict each other here: left out.
	bad bool
}

func (b *box) pinned() bool { return !b.bad && b.lo == b.hi }

// splitGroup is the boxes that differ only in one column's set: within
// it a box I holding a box J splits into J and I minus J, whose counts add
// up to I's (the reconstruction's binary search: the count of the left half
// is searched, the right half is the rest). The whole is the box without
// that column (every value: no NULLs).
type splitGroup struct {
	col     string
	whole   *box
	members []*box
	queued  bool
	seq     uint32 // the order made
}

// maxGroup bounds the boxes compared pairwise in one group: a search
// splits a group's values by halves, a few dozen boxes; hundreds of
// unrelated sets of one column (a linear system's) derive nothing.
const maxGroup = 256

// splitter derives box counts from the answers of one analyst.
type splitter struct {
	sp     *space
	boxes  map[uint32]*box
	groups map[groupKey]*splitGroup
	// columns are the column ids groups were made for: the groups whose
	// whole a new box is are found by its key and each of them (a search
	// makes millions of groups, most never meet their whole).
	columns []uint32
	queue   []*splitGroup
	order   []*box
	ids     map[string]uint32
	keys    boxKeys
	buf     []byte // a column set's key being written
}

// groupKey names a split group: its context's key id and its column's id.
type groupKey struct{ context, column uint32 }

func newSplitter(as []answer, sp *space, o Options) *splitter {
	s := &splitter{sp: sp, boxes: map[uint32]*box{}, groups: map[groupKey]*splitGroup{},
		ids: map[string]uint32{}, keys: newBoxKeys()}
	for _, a := range as {
		lo, hi, ok := boundsOf(a, o)
		if !ok {
			continue
		}
		family, cols := s.sp.boxOf(a.table, a.conj)
		b := s.box(family, a.table, cols)
		s.narrow(b, lo, hi, a.id, nil)
	}
	return s
}

// box finds or makes the box of a family's column sets. Boxes and groups
// are keyed by interned ids of the family and of each column set: a
// search leaves hundreds of thousands of them.
func (s *splitter) box(family, table string, cols []colSet) *box {
	fam, parts := s.internBox(family, cols)
	k := s.keys.id(fam, parts, -1)
	if b, ok := s.boxes[k]; ok {
		return b
	}
	b := &box{family: family, table: table, cols: cols, key: k, hi: math.Inf(1)}
	s.boxes[k] = b
	s.order = append(s.order, b)
	for i, c := range cols {
		ctx := s.keys.id(fam, parts, i)
		gk := groupKey{ctx, s.columnID(c.col)}
		g, ok := s.groups[gk]
		if !ok {
			g = &splitGroup{col: c.col, whole: s.boxes[ctx], seq: uint32(len(s.groups))}
			s.groups[gk] = g
			if g.whole != nil {
				g.whole.wholeOf = append(g.whole.wholeOf, g)
			}
		}
		g.members = append(g.members, b)
		b.groups = append(b.groups, g)
		s.enqueue(g)
	}
	for _, col := range s.columns {
		if g, ok := s.groups[groupKey{k, col}]; ok {
			b.wholeOf = append(b.wholeOf, g)
		}
	}
	slices.SortFunc(b.wholeOf, func(x, y *splitGroup) int { return cmp.Compare(x.seq, y.seq) })
	for _, g := range b.wholeOf {
		g.whole = b
		s.enqueue(g)
	}
	return b
}

// columnID is the id of a column's groups.
func (s *splitter) columnID(col string) uint32 {
	n := len(s.ids)
	id := s.id("column " + col)
	if len(s.ids) > n {
		s.columns = append(s.columns, id)
	}
	return id
}

// internBox interns a box's family and column sets.
func (s *splitter) internBox(family string, cols []colSet) (uint32, []uint32) {
	parts := make([]uint32, len(cols))
	for i, c := range cols {
		s.buf = c.set.appendKey(append(append(s.buf[:0], c.col...), ':'))
		parts[i] = s.idOf(s.buf)
	}
	return s.id("family " + family), parts
}

// idOf is id(string(k)), allocating only for a new key.
func (s *splitter) idOf(k []byte) uint32 {
	if v, ok := s.ids[string(k)]; ok {
		return v
	}
	return s.id(string(k))
}

// id interns a key.
func (s *splitter) id(k string) uint32 {
	if v, ok := s.ids[k]; ok {
		return v
	}
	v := uint32(len(s.ids))
	s.ids[k] = v
	return v
}

func (s *splitter) enqueue(g *splitGroup) {
	if !g.queued {
		g.queued = true
		s.queue = append(s.queue, g)
	}
}

// narrow intersects b's bounds with [lo, hi]; on a change it records why
// (an answer id, or the boxes whose counts gave it) and queues b's groups.
func (s *splitter) narrow(b *box, lo, hi float64, id int64, from []*box) {
	if b.bad {
		return
	}
	lo, hi = math.Max(b.lo, math.Max(lo, 0)), math.Min(b.hi, hi)
	if lo == b.lo && hi == b.hi {
		return
	}
	b.lo, b.hi = lo, hi
	if id != 0 {
		b.own = append(b.own, id)
	}
	b.from = append(b.from, from...)
	if lo > hi {
		b.bad = true
	}
	for _, g := range b.groups {
		s.enqueue(g)
	}
	for _, g := range b.wholeOf {
		s.enqueue(g)
	}
}

// run derives until no count narrows further.
func (s *splitter) run() {
	for len(s.queue) > 0 {
		g := s.queue[0]
		s.queue = s.queue[1:]
		g.queued = false
		s.splitAll(g)
	}
}

// splitAll relates each box of g with the smallest box of g that holds
// it (its parent in the search's halving), and the rest, when the box is a
// prefix or a suffix of it. Only the nearest parent: relating every pair
// would derive the differences of differences, without end.
func (s *splitter) splitAll(g *splitGroup) {
	if len(g.members) > maxGroup {
		return
	}
	var full atomSet
	if len(g.members) > 0 {
		full = s.sp.axis(g.members[0].table, g.col).whole()
	}
	for j := 0; j < len(g.members); j++ {
		inner := g.members[j]
		inSet := colOf(inner, g.col)
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
		consider(g.whole, full)
		for _, b := range g.members {
			consider(b, colOf(b, g.col))
		}
		if outer == nil {
			continue
		}
		rest := outSet.minus(inSet)
		if !apart(inSet, rest) {
			continue
		}
		other := g.member(rest)
		if other == nil {
			other = s.box(inner.family, inner.table, withSet(inner.cols, g.col, rest))
		}
		s.relate(outer, inner, other)
	}
}

// member is the box of g whose set for g's column is set, nil if none.
func (g *splitGroup) member(set atomSet) *box {
	for _, b := range g.members {
		if slices.Equal(colOf(b, g.col), set) {
			return b
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

// relate narrows the three counts of whole = a + b.
func (s *splitter) relate(whole, a, b *box) {
	if b.bad {
		return
	}
	s.narrow(b, whole.lo-a.hi, whole.hi-a.lo, 0, []*box{whole, a})
	s.narrow(a, whole.lo-b.hi, whole.hi-b.lo, 0, []*box{whole, b})
	s.narrow(whole, a.lo+b.lo, a.hi+b.hi, 0, []*box{a, b})
}

func colOf(b *box, col string) atomSet {
	for _, c := range b.cols {
		if c.col == col {
			return c.set
		}
	}
	return nil
}

func withSet(cols []colSet, col string, set atomSet) []colSet {
	out := append([]colSet(nil), cols...)
	for i := range out {
		if out[i].col == col {
			out[i].set = set
		}
	}
	return out
}

// evidenceOf is every answer the boxes' counts rest on, through the boxes
// they were derived from.
func evidenceOf(bs ...*box) []int64 {
	seen := map[*box]bool{}
	ids := map[int64]bool{}
	stack := append([]*box(nil), bs...)
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[x] {
			continue
		}
		seen[x] = true
		for _, id := range x.own {
			ids[id] = true
		}
		stack = append(stack, x.from...)
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
func rows(as []answer, sp func() *space, o Options) []Finding {
	s := newSplitter(as, sp(), o)
	s.run()
	ends, targets := s.emptyEnds(), s.targets()
	type row struct {
		b    *box
		cols []colSet
		key  string
		ends []*box // the empty boxes that pinned its columns' ends
		// values is how many of its columns it pins to one value (the
		// others are at the target's set).
		values int
	}
	var found []row
	seen := map[string]bool{}
	refined := map[string]float64{} // a parent's rows found in its children
	for _, b := range s.order {
		// The target itself is the threshold search's finding.
		if !b.pinned() || b.lo < 1 || len(b.cols) < 2 || b == targets[b.family] {
			continue
		}
		cols, empty, values := s.points(b, targets[b.family], ends)
		// One column at one value in a target of one person is that
		// person's value (idp-attribute's search); a row needs two.
		if values < 2 && (values < 1 || b.lo != 1) {
			continue
		}
		// The same row may be boxed with and without its empty ends.
		k := colsKey(b.family, cols)
		if seen[k] {
			continue
		}
		seen[k] = true
		found = append(found, row{b, cols, k, empty, values})
		// Its parent has one column fewer, or that column at the
		// target's set (a search that goes on to split a target column);
		// a parent is left for its children once they hold all its rows.
		for i, c := range cols {
			refined[colsKey(b.family, without(cols, i))] += b.lo
			if t := targets[b.family]; t != nil && colOf(t, c.col) != nil && !slices.Equal(colOf(t, c.col), c.set) {
				refined[colsKey(b.family, withSet(cols, c.col, colOf(t, c.col)))] += b.lo
			}
		}
	}
	var out []Finding
	for _, r := range found {
		if refined[r.key] >= r.b.lo || (r.b.lo > o.MaxCell && len(r.cols) < s.sp.columns(r.b.table)) {
			continue
		}
		pattern := "row reconstruction"
		if r.values == 1 {
			pattern = "attribute inference"
		}
		f := finding(pattern, r.b.table, s.sp.renderRow(r.b.table, r.cols), r.b.lo, evidenceOf(append(r.ends, r.b)...))
		f.Individual = r.b.lo == 1
		out = append(out, f)
	}
	return out
}

// endKey names a column's end atom in a family.
func endKey(family, col string, atom int32) string {
	return family + "#" + col + "#" + strconv.Itoa(int(atom))
}

// emptyEnds are the boxes answered (or derived) empty whose set for a
// column is that column's end atom alone, by that atom, those with the
// fewest columns (the attack's domain check: the target and the end)
// first.
func (s *splitter) emptyEnds() map[string][]*box {
	out := map[string][]*box{}
	for _, b := range s.order {
		if !b.pinned() || b.lo != 0 {
			continue
		}
		for _, c := range b.cols {
			top := s.sp.axis(b.table, c.col).atoms() - 1
			for _, end := range []int32{0, top} {
				if len(c.set) == 2 && c.set[0] == end && c.set[1] == end+1 {
					k := endKey(b.family, c.col, end)
					out[k] = append(out[k], b)
				}
			}
		}
	}
	for _, zs := range out {
		sort.SliceStable(zs, func(i, j int) bool { return len(zs[i].cols) < len(zs[j].cols) })
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
func (s *splitter) targets() map[string]*box {
	out := map[string]*box{}
	for _, b := range s.order {
		if t := out[b.family]; b.pinned() && len(b.cols) > 0 && (t == nil || b.lo > t.lo) {
			out[b.family] = b
		}
	}
	return out
}

// points is b's column sets with the end atoms an empty box holds taken
// out, if every one is then a single value, or its target's set, those
// empty boxes, and how many single values there are (0: not a row).
func (s *splitter) points(b, target *box, ends map[string][]*box) ([]colSet, []*box, int) {
	out := make([]colSet, len(b.cols))
	var empty []*box
	values := 0
	for i, c := range b.cols {
		if target != nil && target != b && slices.Equal(colOf(target, c.col), c.set) {
			out[i] = c
			continue
		}
		values++
		x := s.sp.axis(b.table, c.col)
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
			z := s.emptyEnd(b, c.col, atom, ends[endKey(b.family, c.col, end)])
			if z == nil {
				return nil, nil, 0
			}
			empty = append(empty, z)
		}
		out[i] = colSet{col: c.col, set: inner}
	}
	return out, empty, values
}

// emptyEnd is a box answered empty that holds b's rows whose col value is
// in atom: b's own box with col narrowed to it, or one of zs.
func (s *splitter) emptyEnd(b *box, col string, atom atomSet, zs []*box) *box {
	if z := s.boxOf(b.family, withSet(b.cols, col, atom)); z != nil && z.pinned() && z.lo == 0 {
		return z
	}
	for i, z := range zs {
		if i == maxEndChecks {
			break
		}
		if holds(z, b, col) {
			return z
		}
	}
	return nil
}

// holds says whether box z holds every row of b whose col value is in z's
// set for col: z constrains no column that b leaves open, and no wider.
func holds(z, b *box, col string) bool {
	for _, zc := range z.cols {
		if zc.col == col {
			continue
		}
		bs := colOf(b, zc.col)
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

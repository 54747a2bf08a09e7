package risk

import (
	"cmp"
	"iter"
	"math"
	"slices"
)

// box is a cell read by columns (boxes.go) with what the answers say of
// its count: [lo, hi], narrowed by its own answers and by the counts of
// the boxes it adds up with. A search leaves millions of boxes, so a box
// holds ids, not text: its family's and its column sets' (splitter.sets);
// and no pointer: the boxes are kept in blocks (slab) that the garbage
// collector need not read.
type box struct {
	lo float64
	hi float64
	id uint32 // its place in the splitter's boxes
	// parts is where its column sets' ids start in the splitter's arena
	// (in the order of their columns' names), and nparts how many.
	parts  uint32
	nparts uint16
	// whole says the box is the whole of some group.
	whole bool
	// bad says the answers contradict each other here: left out.
	bad bool
	// evidence is where its list of evidence starts in splitter.links:
	// the answers that narrowed the box, and the boxes whose counts did
	// (through a split).
	evidence uint32
	// family is the id of its table and the conditions left as written.
	family uint32
	// queued has bit i set while the group of the box's column parts[i]
	// is queued and the box is still its only member (implicit: made
	// only when a second member comes).
	queued uint32
	// made has bit i set once the group of column parts[i] is made (a
	// second member joined it); clear, the group is the box's implicit
	// one, known without looking it up.
	made uint32
}

// implicit says whether the group of b's column parts[i] is b's implicit
// one.
func (b *box) implicit(i int) bool { return i < implicitPlaces && b.made&(1<<i) == 0 }

func (b *box) pinned() bool { return !b.bad && b.lo == b.hi }

// splitGroup is the boxes that differ only in one column's set: within
// it a box I holding a box J splits into J and I minus J, whose counts add
// up to I's (the reconstruction's binary search: the count of the left half
// is searched, the right half is the rest). The whole is the box without
// that column (every value: no NULLs), found by its key when needed. A
// search makes millions of groups, nearly all of one box that no other
// ever joins: those are not made (groupRef), only found by the key of
// their one member and column. The groups made are kept in blocks and
// their members in an arena, neither holding a pointer: the garbage
// collector, which runs often at the rows solver's peak, need not read
// them.
type splitGroup struct {
	// members are the boxes' ids, n of them, held in the splitter's
	// members arena from at, with room for room.
	at, n, room uint32
	id          uint32
	pos         int32 // the column's place in its members' parts
	queued      bool
}

// groupRef is a group: made, or the implicit group of box b's column
// parts[pos]. Groups are ordered as made: by their first member, then the
// column's place.
type groupRef struct {
	g   *splitGroup
	b   *box
	pos int32
}

// first is the group's first member and the column's place in it.
func (s *splitter) first(r groupRef) (*box, int32) {
	if r.g != nil {
		return s.boxAt(s.memberIDs(r.g)[0]), r.g.pos
	}
	return r.b, r.pos
}

// maxGroup bounds the boxes compared pairwise in one group: a search
// splits a group's values by halves, a few dozen boxes; hundreds of
// unrelated sets of one column (a linear system's) derive nothing.
const maxGroup = 256

// groupsGrow is the table of groups' idTable.grow: a shard grown by an
// eighth past eight ninths full holds its entries at 0.79 to 0.89 of its
// slots, where it was 0.64 to 0.8.
const groupsGrow = 8

// implicitPlaces is how many of a box's columns can have an implicit
// group (box.queued's bits); the groups of further columns are made.
const implicitPlaces = 32

// splitter derives box counts from the answers of one analyst.
type splitter struct {
	sp          *space
	boxes       slab[box]
	groups      slab[splitGroup]
	memberLists membersArena
	// boxIndex finds a box by its family and parts; groupIndex a group by
	// its context (a member's family and parts but its column's) and the
	// column's id.
	boxIndex, groupIndex idTable
	queue                fifo
	ids                  interned
	arena                partsArena
	links                evidenceLinks
	buf                  []uint32  // parts being looked up
	one                  [1]uint32 // an implicit group's members
	whole                []groupRef
}

// newSplitter makes the boxes of the answers each gives, in order.
func newSplitter(each iter.Seq[answer], sp *space, o Options) *splitter {
	s := emptySplitter(sp)
	for a := range each {
		lo, hi, ok := boundsOf(a, o)
		if !ok {
			continue
		}
		family, cols := s.sp.boxOf(a.table, a.conj)
		s.buf = s.buf[:0]
		for _, c := range cols {
			s.buf = append(s.buf, s.ids.set(c.col, c.set))
		}
		b := s.box(s.ids.family(family, a.table), s.buf)
		s.narrow(b, lo, hi, a.id)
	}
	return s
}

// emptySplitter is a splitter of no boxes yet.
func emptySplitter(sp *space) *splitter {
	return &splitter{sp: sp, ids: newInterned(), groupIndex: idTable{tagBits: groupTagBits, grow: groupsGrow}}
}

// box finds or makes the box of a family's parts (not kept: copied).
func (s *splitter) box(family uint32, parts []uint32) *box {
	q := boxKey(family, parts, -1)
	slot, e, ok := s.find(&s.boxIndex, &q)
	if ok {
		return s.boxAt(slotPayload(e))
	}
	b, id := s.boxes.add()
	b.id = id
	b.family, b.parts, b.nparts, b.hi = family, s.arena.copy(parts), uint16(len(parts)), math.Inf(1)
	s.insert(&s.boxIndex, slot, &q, b.id)
	for i := range parts {
		s.join(b, i)
	}
	// The groups whose whole b is are queued: their splits can start.
	for _, r := range s.wholeOf(b) {
		b.whole = true
		s.enqueue(r)
	}
	return b
}

// join adds a new box to the group of its i-th column and queues it.
func (s *splitter) join(b *box, i int) {
	parts := s.partsOf(b)
	q := groupKey(b.family, parts, i, s.ids.sets[parts[i]].column)
	slot, e, ok := s.find(&s.groupIndex, &q)
	switch {
	case !ok && i < implicitPlaces && b.id < maxImplicitBox:
		s.insert(&s.groupIndex, slot, &q, slotImplicit(b.id, i))
		s.markWhole(b, i)
		s.enqueue(groupRef{b: b, pos: int32(i)})
		return
	case !ok:
		g := s.newGroup(b, i)
		s.insert(&s.groupIndex, slot, &q, slotGroup(g.id))
		if i < implicitPlaces {
			b.made |= 1 << i
		}
		s.markWhole(b, i)
		s.enqueue(groupRef{g: g})
		return
	}
	r := s.refOf(e)
	if r.g == nil {
		// Its second member: made now, queued as it was (its place in
		// the queue is the implicit group's entry).
		r.g = s.newGroup(r.b, i)
		bit := uint32(1) << i
		r.g.queued = r.b.queued&bit != 0
		r.b.queued &^= bit
		r.b.made |= bit
		s.groupIndex.set(slot, slotEntry(q.hash, slotGroup(r.g.id)))
	}
	if i < implicitPlaces {
		b.made |= 1 << i
	}
	s.addMember(r.g, b.id)
	s.enqueue(groupRef{g: r.g})
}

// markWhole marks the whole of the new group of b's column parts[i], if
// that box was made.
func (s *splitter) markWhole(b *box, i int) {
	if w := s.lookup(b.family, s.partsOf(b), i); w != nil {
		w.whole = true
	}
}

func (s *splitter) newGroup(first *box, pos int) *splitGroup {
	g, id := s.groups.add()
	g.id, g.pos = id, int32(pos)
	s.addMember(g, first.id)
	return g
}

// refOf is the group an entry of groupIndex names.
func (s *splitter) refOf(e uint64) groupRef {
	if p := slotPayload(e); p&slotGroupBit != 0 {
		return groupRef{g: s.groups.at(p &^ slotGroupBit)}
	}
	return implicitRef(s, slotPayload(e))
}

// implicitRef is the implicit group a payload names.
func implicitRef(s *splitter, p uint32) groupRef {
	box, pos := implicitOf(p)
	return groupRef{b: s.boxAt(box), pos: pos}
}

// implicitOf is the box and column place of an implicit group's payload.
func implicitOf(p uint32) (uint32, int32) { return p & (maxImplicitBox - 1), int32(p >> slotPosShift) }

// groupAt is the group of b's i-th column (made with b).
func (s *splitter) groupAt(b *box, i int) groupRef {
	if b.implicit(i) {
		return groupRef{b: b, pos: int32(i)}
	}
	parts := s.partsOf(b)
	q := groupKey(b.family, parts, i, s.ids.sets[parts[i]].column)
	_, e, _ := s.find(&s.groupIndex, &q)
	return s.refOf(e)
}

// wholeOf are the groups whose whole b is, in the order made.
func (s *splitter) wholeOf(b *box) []groupRef {
	s.whole = s.whole[:0]
	parts := s.partsOf(b)
	q := groupKey(b.family, parts, -1, noColumn)
	q.group = false // the context's groups, of any column
	s.eachOfContext(&q, func(e uint64) {
		if m, pos := s.first(s.refOf(e)); m.family == b.family && sameBut(s.partsOf(m), int(pos), parts, -1) {
			s.whole = append(s.whole, s.refOf(e))
		}
	})
	slices.SortFunc(s.whole, func(x, y groupRef) int {
		bx, px := s.first(x)
		by, py := s.first(y)
		return cmp.Or(cmp.Compare(bx.id, by.id), cmp.Compare(px, py))
	})
	return s.whole
}

func (s *splitter) enqueue(r groupRef) {
	if r.g != nil {
		if !r.g.queued {
			r.g.queued = true
			s.queue.push(groupEntry(r.g.id))
		}
		return
	}
	if bit := uint32(1) << r.pos; r.b.queued&bit == 0 {
		r.b.queued |= bit
		s.queue.push(implicitEntry(r.b.id, int(r.pos)))
	}
}

// narrow intersects b's bounds with [lo, hi]; on a change it records why
// (an answer id, or the boxes whose counts gave it) and queues b's groups.
func (s *splitter) narrow(b *box, lo, hi float64, id int64, from ...*box) {
	if b.bad {
		return
	}
	lo, hi = math.Max(b.lo, math.Max(lo, 0)), math.Min(b.hi, hi)
	if lo == b.lo && hi == b.hi {
		return
	}
	b.lo, b.hi = lo, hi
	if id != 0 {
		b.evidence = s.links.add(b.evidence, evidenceLink{id: id})
	}
	for _, f := range from {
		b.evidence = s.links.add(b.evidence, evidenceLink{id: int64(f.id), box: true})
	}
	if lo > hi {
		b.bad = true
	}
	for i := range int(b.nparts) {
		s.enqueue(s.groupAt(b, i))
	}
	if !b.whole {
		return
	}
	for _, r := range s.wholeOf(b) {
		s.enqueue(r)
	}
}

// run derives until no count narrows further.
func (s *splitter) run() {
	for {
		e, ok := s.queue.pop()
		if !ok {
			return
		}
		b, pos := (*box)(nil), int32(0)
		if e&groupBit != 0 {
			g := s.groups.at(entryID(e))
			g.queued = false
			b, pos = s.boxAt(s.memberIDs(g)[0]), g.pos
		} else {
			// An implicit group queued, made since (it took the flag) or
			// not.
			b, pos = s.boxAt(entryID(e)), entryPos(e)
			if r := s.groupAt(b, int(pos)); r.g != nil {
				r.g.queued = false
			} else {
				b.queued &^= 1 << pos
			}
		}
		s.splitAll(b, int(pos))
	}
}

// members are the ids of the members of the group of b's column
// parts[pos].
func (s *splitter) members(b *box, pos int) []uint32 {
	if r := s.groupAt(b, pos); r.g != nil {
		return s.memberIDs(r.g)
	}
	s.one[0] = b.id
	return s.one[:]
}

// relate narrows the three counts of whole = a + b.
func (s *splitter) relate(whole, a, b *box) {
	if b.bad {
		return
	}
	s.narrow(b, whole.lo-a.hi, whole.hi-a.lo, 0, whole, a)
	s.narrow(a, whole.lo-b.hi, whole.hi-b.lo, 0, whole, b)
	s.narrow(whole, a.lo+b.lo, a.hi+b.hi, 0, a, b)
}

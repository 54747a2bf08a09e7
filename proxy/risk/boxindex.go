package risk

import "math/bits"

// The splitter's boxes and groups are found by their keys through hash
// tables of 8-byte entries (idTable): an entry holds a box's or a group's
// id and a tag of its key's hash, and the key is told apart from another
// of the same hash by the parts of the box it names, not kept as text.

// keyQuery is a key looked up: a family's parts but the skip-th (-1:
// none) and, for a group, its column's id.
type keyQuery struct {
	parts  []uint32
	hash   uint64
	skip   int
	family uint32
	column uint32
	group  bool
}

// noColumn stands for the column of a box's key (a box has none).
const noColumn = ^uint32(0)

func boxKey(family uint32, parts []uint32, skip int) keyQuery {
	return keyQuery{parts: parts, skip: skip, family: family, column: noColumn, hash: keyHash(family, parts, skip, noColumn)}
}

// groupKey's hash is its context's (the hash of the box whose parts the
// context is) with the fingerprint's lowest groupTagBits a tag of the
// column: the groups of one context are placed together in the table of
// groups (wholeOf reads them in one run) and told apart by their tags.
func groupKey(family uint32, parts []uint32, skip int, column uint32) keyQuery {
	h := keyHash(family, parts, skip, noColumn)
	tag := mix(h, column) >> (64 - groupTagBits)
	h = h&^(groupTagMask<<fingerprints) | tag<<fingerprints
	return keyQuery{parts: parts, skip: skip, family: family, column: column, group: true, hash: h}
}

const (
	groupTagBits = 7
	groupTagMask = uint64(1)<<groupTagBits - 1
)

// keyHash hashes the family, the parts but the skip-th and the column:
// a group's context hashes as the box whose parts it is (its whole).
func keyHash(family uint32, parts []uint32, skip int, column uint32) uint64 {
	h := mix(0x2545f4914f6cdd1d, family)
	for i, p := range parts {
		if i != skip {
			h = mix(h, p)
		}
	}
	h = mix(h, column)
	// murmur3's finaliser: every bit of h moves the tag and the slot.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

func mix(h uint64, x uint32) uint64 {
	h = (h ^ uint64(x)) * 0x9e3779b97f4a7c15
	return h ^ h>>32
}

// A queue entry is an id: a box's, or a group's under groupBit, and for
// a box's implicit group its column's place.
const (
	groupBit = uint64(1) << 47
	posShift = 32
)

func groupEntry(id uint32) uint64 { return groupBit | uint64(id) }

func implicitEntry(box uint32, pos int) uint64 { return uint64(pos)<<posShift | uint64(box) }

func entryID(e uint64) uint32 { return uint32(e) }

func entryPos(e uint64) int32 { return int32(e>>posShift) & 0xff }

// A table's entry: the used bit, 31 bits of the key's hash (which place
// it in the table, so a growth moves entries without reading their keys)
// and a payload: a box's id in the table of boxes; in the table of groups
// a group's id under slotGroupBit, or a box's id and, above it, the place
// of the column of its implicit group.
const (
	usedBit        = uint64(1) << 63
	fingerprints   = 33 // the hash's bits below the fingerprint
	fingerprintBit = 32 // the fingerprint's place in an entry
	slotGroupBit   = uint32(1) << 31
	slotPosShift   = 26
	// maxImplicitBox bounds the ids of boxes that have implicit groups
	// (the payload's bits below the place): a larger box's groups are
	// made at once.
	maxImplicitBox = uint32(1) << slotPosShift
)

func slotEntry(hash uint64, payload uint32) uint64 {
	return usedBit | hash>>fingerprints<<fingerprintBit | uint64(payload)
}

func slotPayload(e uint64) uint32 { return uint32(e) }

func slotFingerprint(e uint64) uint64 { return e &^ usedBit >> fingerprintBit }

func slotGroup(id uint32) uint32 { return slotGroupBit | id }

func slotImplicit(box uint32, pos int) uint32 { return uint32(pos)<<slotPosShift | box }

// idTable is an open-addressing table of entries (0: empty), in shards
// by a few bits of the hash, each grown on its own by a quarter past four
// fifths full: a whole search's table of groups runs to a gigabyte, and
// grown at once it would hold its old slots and as many new ones
// together. An entry's place is read from its fingerprint but the lowest
// tagBits (the table of groups: its column's tag).
type idTable struct {
	shards  [tableShards]idShard
	tagBits uint
	// grow, when set, is k of a shard grown by 1/k past k/(k+1) full (0:
	// 4, by a quarter past four fifths). The table of groups, most of the
	// rows solver's peak, is held fuller: its probes read entries in a row
	// from one home, and a longer run costs less than the room.
	grow int
}

type idShard struct {
	slots []uint64
	n     int
}

const (
	shardBits   = 6
	tableShards = 1 << shardBits
	slotBits    = 25 // a slot is its shard's number above its place in it (in an int of 32 bits)
)

// shardOf is the shard of a hash: its lowest bits, none of the
// fingerprint's.
func shardOf(hash uint64) int { return int(hash) & (tableShards - 1) }

// home is the place of a fingerprint in a shard of n slots.
func (t *idTable) home(fingerprint uint64, n int) int {
	return int(fingerprint >> t.tagBits * uint64(n) >> (64 - fingerprints - t.tagBits))
}

// set overwrites the entry at a slot find gave.
func (t *idTable) set(slot int, e uint64) {
	t.shards[slot>>slotBits].slots[slot&(1<<slotBits-1)] = e
}

// find is the slot of q's entry, or of the empty slot where it goes.
func (s *splitter) find(t *idTable, q *keyQuery) (int, uint64, bool) {
	n := shardOf(q.hash)
	sh := &t.shards[n]
	if sh.slots == nil {
		sh.slots = make([]uint64, 1<<6)
	}
	fp := q.hash >> fingerprints
	for i := t.home(fp, len(sh.slots)); ; i++ {
		if i == len(sh.slots) {
			i = 0
		}
		e := sh.slots[i]
		if e == 0 {
			return n<<slotBits | i, 0, false
		}
		if slotFingerprint(e) == fp && s.matches(slotPayload(e), q) {
			return n<<slotBits | i, e, true
		}
	}
}

// eachOfContext calls f with every entry of the table of groups whose
// context may be q's (a box's key: its tag is not read): those of one
// context are placed from one home, before the next empty slot.
func (s *splitter) eachOfContext(q *keyQuery, f func(uint64)) {
	t := &s.groupIndex
	sh := &t.shards[shardOf(q.hash)]
	if sh.slots == nil {
		return
	}
	ctx := q.hash >> fingerprints >> t.tagBits
	for i := t.home(q.hash>>fingerprints, len(sh.slots)); ; i++ {
		if i == len(sh.slots) {
			i = 0
		}
		e := sh.slots[i]
		if e == 0 {
			return
		}
		if slotFingerprint(e)>>t.tagBits == ctx {
			f(e)
		}
	}
}

// matches says whether the payload p names q's box or group.
func (s *splitter) matches(p uint32, q *keyQuery) bool {
	m, pos := (*box)(nil), -1
	switch {
	case !q.group:
		m = s.boxAt(p)
	case p&slotGroupBit != 0:
		g := s.groups.at(p &^ slotGroupBit)
		m, pos = s.boxAt(s.memberIDs(g)[0]), int(g.pos)
	default:
		r := implicitRef(s, p)
		m, pos = r.b, int(r.pos)
	}
	if m.family != q.family {
		return false
	}
	parts := s.partsOf(m)
	if pos >= 0 && s.ids.sets[parts[pos]].column != q.column {
		return false
	}
	return sameBut(parts, pos, q.parts, q.skip)
}

// sameBut says whether a but its ath and b but its bth are equal.
func sameBut(a []uint32, ai int, b []uint32, bi int) bool {
	na, nb := len(a), len(b)
	if ai >= 0 {
		na--
	}
	if bi >= 0 {
		nb--
	}
	if na != nb {
		return false
	}
	for i, j := 0, 0; ; i, j = i+1, j+1 {
		if i == ai {
			i++
		}
		if j == bi {
			j++
		}
		if i >= len(a) || j >= len(b) {
			return true // both ended: they are as long
		}
		if a[i] != b[j] {
			return false
		}
	}
}

// insert fills the empty slot find gave for q, growing its shard past
// four fifths full (t.grow).
func (s *splitter) insert(t *idTable, slot int, q *keyQuery, payload uint32) {
	t.set(slot, slotEntry(q.hash, payload))
	sh := &t.shards[slot>>slotBits]
	sh.n++
	k := t.grow
	if k == 0 {
		k = 4
	}
	if sh.n*(k+1) < len(sh.slots)*k {
		return
	}
	old := sh.slots
	sh.slots = make([]uint64, len(old)+len(old)/k)
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := t.home(slotFingerprint(e), len(sh.slots))
		for sh.slots[i] != 0 {
			if i++; i == len(sh.slots) {
				i = 0
			}
		}
		sh.slots[i] = e
	}
}

// partsArena holds boxes' parts in blocks: one allocation per thousands
// of boxes, and a box holds where its parts start (its block above
// arenaBits, its place in it below), not a slice: no pointer for the
// garbage collector to follow.
type partsArena struct{ blocks [][]uint32 }

const (
	arenaBits  = 16
	arenaBlock = 1 << arenaBits
)

// copy keeps p (at most arenaBlock ids: a box's parts are its columns,
// fewer than SQLite's 32,767) and returns where it starts.
func (a *partsArena) copy(p []uint32) uint32 {
	n := len(a.blocks)
	if n == 0 || arenaBlock-len(a.blocks[n-1]) < len(p) {
		a.blocks = append(a.blocks, make([]uint32, 0, arenaBlock))
		n++
	}
	last := &a.blocks[n-1]
	at := uint32(n-1)<<arenaBits | uint32(len(*last))
	*last = append(*last, p...)
	return at
}

// at is the n ids kept from at.
func (a *partsArena) at(at uint32, n uint16) []uint32 {
	b, i := at>>arenaBits, at&(arenaBlock-1)
	return a.blocks[b][i : i+uint32(n) : i+uint32(n)]
}

// partsOf is b's column sets' ids.
func (s *splitter) partsOf(b *box) []uint32 { return s.arena.at(b.parts, b.nparts) }

// slab holds the boxes (or the groups made) in blocks, each at its id: one
// is found by its id without a table of pointers, and the blocks, holding
// no pointer, are not read by the garbage collector.
type slab[T any] struct {
	blocks [][]T
	n      uint32
}

const (
	slabBits  = 12
	slabBlock = 1 << slabBits
)

// add is a new zero element and its id.
func (sl *slab[T]) add() (*T, uint32) {
	if sl.n&(slabBlock-1) == 0 {
		sl.blocks = append(sl.blocks, make([]T, slabBlock))
	}
	id := sl.n
	sl.n++
	return &sl.blocks[id>>slabBits][id&(slabBlock-1)], id
}

// at is the element of an id.
func (sl *slab[T]) at(id uint32) *T { return &sl.blocks[id>>slabBits][id&(slabBlock-1)] }

// boxAt is the box of an id.
func (s *splitter) boxAt(id uint32) *box { return s.boxes.at(id) }

// membersArena holds the groups' members in blocks: a group's list is
// moved to twice the room when full, and the room it left is taken by the
// next list that needs as much.
type membersArena struct {
	blocks [][]uint32
	// free are the starts of the rooms left, by the room's size's log2.
	free [32][]uint32
}

// reserve is the start of room for n ids (a power of two); a list longer
// than a block has a block of its own.
func (a *membersArena) reserve(n uint32) uint32 {
	if f := &a.free[bits.Len32(n)-1]; len(*f) > 0 {
		at := (*f)[len(*f)-1]
		*f = (*f)[:len(*f)-1]
		return at
	}
	k := len(a.blocks)
	if k == 0 || n > arenaBlock || uint32(arenaBlock-len(a.blocks[k-1])) < n {
		a.blocks = append(a.blocks, make([]uint32, 0, max(arenaBlock, n)))
		k++
	}
	last := &a.blocks[k-1]
	at := uint32(k-1)<<arenaBits | uint32(len(*last))
	*last = (*last)[:len(*last)+int(n)]
	return at
}

// ids is the n ids kept from at.
func (a *membersArena) ids(at, n uint32) []uint32 {
	b, i := at>>arenaBits, at&(arenaBlock-1)
	return a.blocks[b][i : i+n : i+n]
}

// memberIDs are g's members' ids.
func (s *splitter) memberIDs(g *splitGroup) []uint32 { return s.memberLists.ids(g.at, g.n) }

// addMember appends a box's id to g's members.
func (s *splitter) addMember(g *splitGroup, id uint32) {
	if g.n == g.room {
		room := max(2, 2*g.room)
		at := s.memberLists.reserve(room)
		copy(s.memberLists.ids(at, g.n), s.memberIDs(g))
		if g.room > 0 {
			f := &s.memberLists.free[bits.Len32(g.room)-1]
			*f = append(*f, g.at)
		}
		g.at, g.room = at, room
	}
	s.memberLists.ids(g.at, g.n+1)[g.n] = id
	g.n++
}

// fifo is a queue of entries in blocks, each let go once read. A box's
// implicit groups are queued column after column as it is made and
// narrowed: consecutive entries of one box's columns are held as one run
// (the first column's entry and how many follow), which a whole search's
// tens of millions of queued groups need a tenth of the room for.
type fifo struct {
	blocks [][]uint64
	head   int
	// taken is how many of the head entry's run were read.
	taken uint64
}

const (
	fifoBlock = 1 << 12
	runShift  = 40 // the run's further columns, above the column's place
	runMask   = uint64(0x3f) << runShift
)

func (q *fifo) push(e uint64) {
	if n := len(q.blocks); n > 0 && e&groupBit == 0 {
		last := q.blocks[n-1]
		if i := len(last) - 1; i >= 0 && (n > 1 || i >= q.head) {
			l := last[i]
			run := l & runMask >> runShift
			if l&groupBit == 0 && entryID(l) == entryID(e) && uint64(entryPos(l))+run+1 == uint64(entryPos(e)) && run+1 < runMask>>runShift {
				last[i] = l&^runMask | (run+1)<<runShift
				return
			}
		}
	}
	if n := len(q.blocks); n == 0 || len(q.blocks[n-1]) == fifoBlock {
		q.blocks = append(q.blocks, make([]uint64, 0, fifoBlock))
	}
	last := &q.blocks[len(q.blocks)-1]
	*last = append(*last, e)
}

func (q *fifo) pop() (uint64, bool) {
	for len(q.blocks) > 0 {
		b := q.blocks[0]
		if q.head < len(b) {
			e := b[q.head]
			run := e & runMask >> runShift
			out := e&^runMask + q.taken<<posShift
			if e&groupBit != 0 {
				out = e
			}
			if e&groupBit != 0 || q.taken == run {
				q.head++
				q.taken = 0
			} else {
				q.taken++
			}
			return out, true
		}
		if len(b) < fifoBlock {
			return 0, false // the last block, read up to where it is filled
		}
		q.blocks[0] = nil
		q.blocks, q.head = q.blocks[1:], 0
	}
	return 0, false
}

// evidenceLinks are the boxes' lists of evidence, in blocks: a box
// narrowed once or twice holds one 4-byte start instead of two lists. A
// link is held in 12 bytes (packedLink), not evidenceLink's 16: a whole
// search makes tens of millions.
type evidenceLinks struct{ blocks [][]packedLink }

// evidenceLink is an answer's id, or (box) a box's, and where the list
// goes on (0: it ends).
type evidenceLink struct {
	id   int64
	next uint32
	box  bool
}

// packedLink is an evidenceLink as its id's low and high halves and its
// next link, the box flag in next's top bit (a list runs to fewer than
// 2^31 links).
type packedLink [3]uint32

const (
	linksBlock = 1 << 14
	linkBoxBit = uint32(1) << 31
)

// add puts l before the list that starts at head; it returns the list's
// new start.
func (ls *evidenceLinks) add(head uint32, l evidenceLink) uint32 {
	if n := len(ls.blocks); n == 0 || len(ls.blocks[n-1]) == linksBlock {
		ls.blocks = append(ls.blocks, make([]packedLink, 0, linksBlock))
	}
	last := &ls.blocks[len(ls.blocks)-1]
	next := head
	if l.box {
		next |= linkBoxBit
	}
	*last = append(*last, packedLink{uint32(l.id), uint32(uint64(l.id) >> 32), next})
	return uint32((len(ls.blocks)-1)*linksBlock + len(*last))
}

// at is the link at a list's place (one past its index).
func (ls *evidenceLinks) at(at uint32) evidenceLink {
	i := int(at) - 1
	p := ls.blocks[i/linksBlock][i%linksBlock]
	return evidenceLink{id: int64(uint64(p[1])<<32 | uint64(p[0])), next: p[2] &^ linkBoxBit, box: p[2]&linkBoxBit != 0}
}

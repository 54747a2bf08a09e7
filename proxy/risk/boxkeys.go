package risk

import (
	"encoding/binary"
	"hash/maphash"
)

// boxKeys interns the keys of boxes and of their contexts (a box without
// one column): a family id and column-set ids, all but one. A search
// makes millions of them, so a key is not kept as text: it is found by
// its hash and told apart from another of the same hash by the ids it
// was made of (the parts are shared with the box that made them).
type boxKeys struct {
	seed    maphash.Seed
	first   map[uint64]uint32   // by hash, the first key's id
	clashes map[uint64][]uint32 // the ids of further keys of that hash
	keys    []boxKey            // by id
	buf     []byte
	last    *boxParts
}

// boxKey is a family id and the part ids but the skip-th (-1: none).
type boxKey struct {
	*boxParts
	skip int32
}

// boxParts are a box's family id and column-set ids, shared by its key
// and its contexts' keys.
type boxParts struct {
	parts  []uint32
	family uint32
}

// partsOf is the family and the parts, shared with the key made last
// when they are the same (a box's key and its contexts' follow each
// other).
func (ks *boxKeys) partsOf(family uint32, parts []uint32) *boxParts {
	if l := ks.last; l != nil && l.family == family && len(l.parts) == len(parts) && (len(parts) == 0 || &l.parts[0] == &parts[0]) {
		return l
	}
	ks.last = &boxParts{parts: parts, family: family}
	return ks.last
}

func newBoxKeys() boxKeys {
	return boxKeys{seed: maphash.MakeSeed(), first: map[uint64]uint32{}, clashes: map[uint64][]uint32{}}
}

// id is the key's id, made when new; parts must not change afterwards.
func (ks *boxKeys) id(family uint32, parts []uint32, skip int) uint32 {
	k := boxKey{ks.partsOf(family, parts), int32(skip)}
	h, id, ok := ks.find(k)
	if ok {
		return id
	}
	id = uint32(len(ks.keys))
	ks.keys = append(ks.keys, k)
	if _, taken := ks.first[h]; taken {
		ks.clashes[h] = append(ks.clashes[h], id)
	} else {
		ks.first[h] = id
	}
	return id
}

// lookup is the key's id, if it was made.
func (ks *boxKeys) lookup(family uint32, parts []uint32, skip int) (uint32, bool) {
	_, id, ok := ks.find(boxKey{ks.partsOf(family, parts), int32(skip)})
	return id, ok
}

func (ks *boxKeys) find(k boxKey) (uint64, uint32, bool) {
	ks.buf = k.pack(ks.buf[:0])
	h := maphash.Bytes(ks.seed, ks.buf)
	id, ok := ks.first[h]
	if !ok {
		return h, 0, false
	}
	if ks.keys[id].equal(k) {
		return h, id, true
	}
	for _, id := range ks.clashes[h] {
		if ks.keys[id].equal(k) {
			return h, id, true
		}
	}
	return h, 0, false
}

func (k boxKey) pack(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, k.family)
	for i, p := range k.parts {
		if i != int(k.skip) {
			b = binary.LittleEndian.AppendUint32(b, p)
		}
	}
	return b
}

func (k boxKey) len() int {
	if k.skip >= 0 {
		return len(k.parts) - 1
	}
	return len(k.parts)
}

// at is the i-th part of the key.
func (k boxKey) at(i int) uint32 {
	if k.skip >= 0 && i >= int(k.skip) {
		i++
	}
	return k.parts[i]
}

func (k boxKey) equal(o boxKey) bool {
	if k.family != o.family || k.len() != o.len() {
		return false
	}
	for i := 0; i < k.len(); i++ {
		if k.at(i) != o.at(i) {
			return false
		}
	}
	return true
}

// boxOf is the box of a family's column sets, nil if none was made.
func (s *splitter) boxOf(family string, cols []colSet) *box {
	fam, parts := s.internBox(family, cols)
	k, ok := s.keys.lookup(fam, parts, -1)
	if !ok {
		return nil
	}
	return s.boxes[k]
}

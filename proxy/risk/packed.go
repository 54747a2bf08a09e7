package risk

import (
	"iter"

	"countwall/proxy/state/release"
)

// packedAnswers are an analyst's answers held while the rows solver runs:
// it reads them once, to make its boxes, and the other solvers read them
// after it. As answers they are an allocation of pointers per answer (its
// conditions), which the garbage collector reads at every cycle through
// the rows solver's peak; packed, they are the same answers, in the same
// order, as ids in two slices without pointers, a third of the room. An
// answer's conditions are held as those it shares, at their start, with
// the answer before it (a search's statements differ in their last few)
// and the ids of the rest: the answers are read in order.
type packedAnswers struct {
	kinds []*kind
	conds []*release.Conjunct
	rows  []packedAnswer
	// lastIDs are the last answer's conditions' ids while packing (prev
	// the slice they were in before it).
	lastIDs []uint32
	// conj are the ids of the answers' conditions past those shared, each
	// answer's from its packedAnswer.conj on, in blocks of packBlock.
	conj [][]uint32
	prev []uint32
}

// packedAnswer is an answer but for its kind's and its conditions' ids.
type packedAnswer struct {
	id    int64
	value float64
	kind  uint32
	conj  uint32 // its block above packBits, its place in it below
	n     uint16 // how many conditions
	// shared is how many of its first conditions are the answer's before.
	shared uint16
	exact  bool
}

const (
	packBits  = 16
	packBlock = 1 << packBits
)

// pack packs the answers of lists, one list after the other; an answer
// of more conditions than a block holds is not packed, and pack says so
// (the caller keeps the answers as they are).
func pack(lists ...[]answer) (*packedAnswers, bool) {
	n := 0
	for _, as := range lists {
		n += len(as)
	}
	p := &packedAnswers{rows: make([]packedAnswer, 0, n)}
	kindIDs := map[*kind]uint32{}
	condIDs := map[*release.Conjunct]uint32{}
	for _, as := range lists {
		for _, a := range as {
			if !p.add(a, kindIDs, condIDs) {
				return nil, false
			}
		}
	}
	return p, true
}

// add packs a, the ids of kinds and conditions made as they come.
func (p *packedAnswers) add(a answer, kindIDs map[*kind]uint32, condIDs map[*release.Conjunct]uint32) bool {
	if len(a.conj) > packBlock-1 {
		return false
	}
	k, ok := kindIDs[a.kind]
	if !ok {
		k = uint32(len(p.kinds))
		kindIDs[a.kind] = k
		p.kinds = append(p.kinds, a.kind)
	}
	ids := p.prev[:0]
	for _, c := range a.conj {
		id, ok := condIDs[c]
		if !ok {
			id = uint32(len(p.conds))
			condIDs[c] = id
			p.conds = append(p.conds, c)
		}
		ids = append(ids, id)
	}
	shared := 0
	if len(p.rows) > 0 {
		last := p.rows[len(p.rows)-1]
		for shared < int(min(last.n, uint16(len(ids)))) && p.lastIDs[shared] == ids[shared] {
			shared++
		}
	}
	tail := ids[shared:]
	if n := len(p.conj); n == 0 || packBlock-len(p.conj[n-1]) < len(tail) {
		p.conj = append(p.conj, make([]uint32, 0, packBlock))
	}
	last := &p.conj[len(p.conj)-1]
	p.rows = append(p.rows, packedAnswer{id: a.id, value: a.value, kind: k, n: uint16(len(a.conj)), shared: uint16(shared),
		exact: a.exact, conj: uint32(len(p.conj)-1)<<packBits | uint32(len(*last))})
	*last = append(*last, tail...)
	p.prev, p.lastIDs = p.lastIDs, ids
	return true
}

// all gives every answer in order; an answer's conditions are valid only
// until the next is given.
func (p *packedAnswers) all() iter.Seq[answer] {
	return func(yield func(answer) bool) {
		buf := make([]*release.Conjunct, 0, 32)
		for _, r := range p.rows {
			buf = p.appendConj(buf[:r.shared], r)
			if !yield(answer{id: r.id, kind: p.kinds[r.kind], conj: buf, value: r.value, exact: r.exact}) {
				return
			}
		}
	}
}

// appendConj appends r's conditions past those it shares with the answer
// before it.
func (p *packedAnswers) appendConj(out []*release.Conjunct, r packedAnswer) []*release.Conjunct {
	at := r.conj & (packBlock - 1)
	for _, id := range p.conj[r.conj>>packBits][at : at+uint32(r.n-r.shared)] {
		out = append(out, p.conds[id])
	}
	return out
}

// unpack is the answers again, as they were: the same kinds and
// conditions, each answer's conditions a slice of their own length and
// capacity (in blocks shared by many answers).
func (p *packedAnswers) unpack() []answer {
	out := make([]answer, len(p.rows))
	var block []*release.Conjunct
	var prev []*release.Conjunct
	for i, r := range p.rows {
		if block == nil || cap(block)-len(block) < int(r.n) {
			block = make([]*release.Conjunct, 0, max(packBlock, int(r.n)))
		}
		n := len(block)
		block = p.appendConj(append(block, prev[:r.shared]...), r)
		prev = block[n:len(block):len(block)]
		out[i] = answer{id: r.id, kind: p.kinds[r.kind], conj: prev, value: r.value, exact: r.exact}
	}
	return out
}

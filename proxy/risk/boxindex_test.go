package risk

import (
	"fmt"
	"slices"
	"testing"
)

// TestEntriesEncode: a table's entry gives back its fingerprint and its
// payload's id, group bit and implicit group's column place, exactly; a
// queue's entry its id and place.
func TestEntriesEncode(t *testing.T) {
	tests := []struct {
		payload uint32
		id      uint32
		pos     int32
		group   bool
	}{
		{slotImplicit(0, 0), 0, 0, false},
		{slotImplicit(7, 3), 7, 3, false},
		{slotImplicit(maxImplicitBox-1, 31), maxImplicitBox - 1, 31, false},
		{slotGroup(42), 42, 0, true},
		{slotGroup(1<<31 - 1), 1<<31 - 1, 0, true},
	}
	for _, tc := range tests {
		for _, hash := range []uint64{0, 1<<64 - 1, 0x0123456789abcdef} {
			e := slotEntry(hash, tc.payload)
			if slotPayload(e) != tc.payload || slotFingerprint(e) != hash>>fingerprints || e&usedBit == 0 {
				t.Errorf("entry %#x of hash %#x: payload %#x, fingerprint %#x", e, hash, slotPayload(e), slotFingerprint(e))
			}
		}
		if group := tc.payload&slotGroupBit != 0; group != tc.group {
			t.Errorf("payload %#x: group %t, want %t", tc.payload, group, tc.group)
		}
		if !tc.group {
			if id, pos := implicitOf(tc.payload); id != tc.id || pos != tc.pos {
				t.Errorf("payload %#x: box %d, place %d; want %d, %d", tc.payload, id, pos, tc.id, tc.pos)
			}
		}
		if q := implicitEntry(tc.id, int(tc.pos)); !tc.group && (entryID(q) != tc.id || entryPos(q) != tc.pos || q&groupBit != 0) {
			t.Errorf("queue entry %#x: id %d, place %d", q, entryID(q), entryPos(q))
		}
	}
}

// TestSameBut compares two part lists each without one place.
func TestSameBut(t *testing.T) {
	tests := []struct {
		a    []uint32
		ai   int
		b    []uint32
		bi   int
		want bool
	}{
		{[]uint32{1, 2, 3}, -1, []uint32{1, 2, 3}, -1, true},
		{[]uint32{1, 2, 3}, 1, []uint32{1, 3}, -1, true},
		{[]uint32{1, 2, 3}, 1, []uint32{1, 9, 3}, 1, true},
		{[]uint32{1, 2, 3}, 0, []uint32{9, 2, 3}, 0, true},
		{[]uint32{1, 2, 3}, 2, []uint32{1, 2}, -1, true},
		{[]uint32{1, 2, 3}, 2, []uint32{1, 2, 9}, 2, true},
		{[]uint32{1, 2, 3}, 0, []uint32{1, 2, 3}, 2, false},
		{[]uint32{1, 2, 3}, -1, []uint32{1, 2}, -1, false},
		{[]uint32{1}, 0, nil, -1, true},
		{[]uint32{1}, 0, []uint32{2}, 0, true},
	}
	for _, tc := range tests {
		if got := sameBut(tc.a, tc.ai, tc.b, tc.bi); got != tc.want {
			t.Errorf("sameBut(%v, %d, %v, %d) = %t, want %t", tc.a, tc.ai, tc.b, tc.bi, got, tc.want)
		}
	}
}

// TestIndexFindsEveryBoxAndGroup: past many growths of the tables, every
// box is found by its parts and every group by its context, the box that
// is a context is its groups' whole, and a group of two members is made
// while a group of one stays implicit.
func TestIndexFindsEveryBoxAndGroup(t *testing.T) {
	s := emptySplitter(nil)
	fam := s.ids.family("people where zip <> 3", "people")
	set := func(col string, v int32) uint32 { return s.ids.set(col, atomSet{v, v + 1}) }
	const n = 3000
	for i := range int32(n) {
		s.box(fam, []uint32{set("age", i%50), set("sex", i/50)})
	}
	whole := s.box(fam, []uint32{set("sex", 0)}) // age left open: the whole of sex 0's ages
	if s.boxes.n != n+1 {
		t.Fatalf("%d boxes, want %d", s.boxes.n, n+1)
	}
	for i := range int32(n) {
		b := s.lookup(fam, []uint32{set("age", i%50), set("sex", i/50)}, -1)
		if b == nil || b.id != uint32(i) {
			t.Fatalf("box %d found as %v", i, b)
		}
	}
	// Age's groups: a context per sex, 50 members each; sex's: a context
	// per age, 60 members each.
	if got := s.groups.n; got != 50+60 {
		t.Errorf("%d groups made, want 110", got)
	}
	tests := []struct {
		box, pos int
		members  int
	}{
		{0, 0, 50}, // age 0, sex 0: the ages of sex 0
		{0, 1, 60}, // the sexes of age 0
		{2999, 0, 50},
		{n, 0, 1}, // the whole's own group of sex: implicit
	}
	for _, tc := range tests {
		if got := len(s.members(s.boxAt(uint32(tc.box)), tc.pos)); got != tc.members {
			t.Errorf("box %d, column %d: %d members, want %d", tc.box, tc.pos, got, tc.members)
		}
	}
	if w := s.wholeOf(whole); len(w) != 1 || w[0].g == nil || s.memberIDs(w[0].g)[0] != 0 || w[0].g.pos != 0 {
		t.Errorf("the whole of sex 0's ages is the whole of %s", fmt.Sprint(w))
	}
	// Box 0's two groups were made, the whole's own is not; only the
	// whole is marked as one.
	if b0 := s.boxAt(0); b0.made != 3 || b0.whole || whole.made != 0 || !whole.whole {
		t.Errorf("box 0: made %b, whole %t; the whole: made %b, whole %t", b0.made, b0.whole, whole.made, whole.whole)
	}
	if got := s.lookup(fam, s.partsOf(s.boxAt(0)), 0); got != whole {
		t.Errorf("box 0 without its age is %v, want the whole", got)
	}
}

// TestEvidenceLinksAndQueue: lists of evidence read back newest first,
// across blocks; the queue gives its entries back in order, across
// blocks, and says when it is empty.
func TestEvidenceLinksAndQueue(t *testing.T) {
	var ls evidenceLinks
	var a, b uint32
	for i := range int64(linksBlock + 3) {
		if i%2 == 0 {
			a = ls.add(a, evidenceLink{id: -i})
		} else {
			b = ls.add(b, evidenceLink{id: i, box: true})
		}
	}
	read := func(at uint32) (ids []int64, boxes int) {
		for ; at != 0; at = ls.at(at).next {
			ids = append(ids, ls.at(at).id)
			if ls.at(at).box {
				boxes++
			}
		}
		return ids, boxes
	}
	ids, boxes := read(a)
	if len(ids) != linksBlock/2+2 || ids[0] != -linksBlock-2 || ids[len(ids)-1] != 0 || boxes != 0 {
		t.Errorf("list a: %d ids from %d to %d, %d boxes", len(ids), ids[0], ids[len(ids)-1], boxes)
	}
	ids, boxes = read(b)
	if len(ids) != linksBlock/2+1 || ids[0] != linksBlock+1 || ids[len(ids)-1] != 1 || boxes != len(ids) {
		t.Errorf("list b: %d ids from %d to %d, %d boxes", len(ids), ids[0], ids[len(ids)-1], boxes)
	}
	var q fifo
	for _, n := range []int{0, 1, fifoBlock, fifoBlock + 1, 3 * fifoBlock} {
		for i := range n {
			q.push(uint64(i))
		}
		for i := range n {
			if e, ok := q.pop(); !ok || e != uint64(i) {
				t.Fatalf("%d pushed: pop %d gave %d, %t", n, i, e, ok)
			}
		}
		if e, ok := q.pop(); ok {
			t.Fatalf("%d pushed and popped: pop gave %d", n, e)
		}
	} // One box's columns queued in a row are one entry, read back one
	// column at a time, in order, and a run read part way goes on.
	want := []uint64{implicitEntry(5, 0), implicitEntry(5, 1), implicitEntry(5, 2), groupEntry(5),
		implicitEntry(5, 3), implicitEntry(6, 4), implicitEntry(6, 5), implicitEntry(6, 7), implicitEntry(6, 8)}
	q = fifo{}
	for _, e := range want[:7] {
		q.push(e)
	}
	if got := len(q.blocks[0]); got != 4 {
		t.Errorf("%d entries held for 7 pushed, want 4", got)
	}
	var got []uint64
	e, _ := q.pop()
	got = append(got, e)
	q.push(want[7]) // not the next column of box 6: its own entry
	q.push(want[8])
	for {
		e, ok := q.pop()
		if !ok {
			break
		}
		got = append(got, e)
	}
	if !slices.Equal(got, want) {
		t.Errorf("popped %x, want %x", got, want)
	}
}

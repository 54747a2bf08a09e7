package risk

import (
	"reflect"
	"testing"

	"countwall/proxy/state/release"
)

// TestPackedAnswersComeBackTheSame: answers packed (across blocks of
// condition ids, with a list of published answers after the analyst's)
// are given back in order, each with its own kind and conditions (the
// same pointers), and unpacked as they were, each answer's conditions a
// slice of its own length and capacity.
func TestPackedAnswersComeBackTheSame(t *testing.T) {
	rd := newReader()
	conds := make([]*release.Conjunct, 40)
	for i := range conds {
		conds[i] = rd.intern(release.Compare("age", release.OpGe, ConstantOf(string(rune('0'+i%10))+"0"+string(rune('a'+i)))))
	}
	kinds := []*kind{{mechanism: "idp", table: "people", shape: "s1"}, {mechanism: "exact", table: "people", shape: "s2", threshold: &threshold{atLeast: 3}}}
	var mine, pub []answer
	for i := range 9000 { // 9,000 answers of up to 17 conditions: past a block of ids
		conj := make([]*release.Conjunct, 0, i%18)
		for j := range i % 18 {
			conj = append(conj, conds[(i+j)%len(conds)])
		}
		a := answer{id: int64(i + 1), kind: kinds[i%2], conj: conj, value: float64(i % 7), exact: i%3 == 0}
		if i < 8000 {
			mine = append(mine, a)
		} else {
			pub = append(pub, a)
		}
	}
	want := append(append([]answer(nil), mine...), pub...)
	p, ok := pack(mine, pub)
	if !ok {
		t.Fatal("not packed")
	}
	if len(p.conj) < 2 {
		t.Fatalf("%d blocks of ids, want the answers past one", len(p.conj))
	}
	i := 0
	for a := range p.all() {
		w := want[i]
		if a.id != w.id || a.kind != w.kind || a.value != w.value || a.exact != w.exact || !reflect.DeepEqual(a.conj, w.conj) {
			t.Fatalf("answer %d given as %+v, want %+v", i, a, w)
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("%d answers given, want %d", i, len(want))
	}
	got := p.unpack()
	if !reflect.DeepEqual(got, want) {
		t.Fatal("unpacked answers differ from the packed ones")
	}
	for i, a := range got {
		if cap(a.conj) != len(a.conj) {
			t.Fatalf("answer %d: conditions of length %d, capacity %d", i, len(a.conj), cap(a.conj))
		}
		for j, c := range a.conj {
			if c != want[i].conj[j] {
				t.Fatalf("answer %d, condition %d: not the same condition", i, j)
			}
		}
	}
}

// TestPackedAnswersShareTheirFirstConditions: a search's answers, each
// sharing its first conditions with the one before, hold only the ids of
// the rest, and come back as they were.
func TestPackedAnswersShareTheirFirstConditions(t *testing.T) {
	rd := newReader()
	conds := make([]*release.Conjunct, 30)
	for i := range conds {
		conds[i] = rd.intern(release.Compare("c"+string(rune('a'+i)), release.OpLt, ConstantOf("1")))
	}
	k := &kind{mechanism: "idp", table: "people", shape: "s"}
	var as []answer
	total := 0
	for i := range 3000 {
		// Answers in threes from one start: the second and third share
		// their first conditions with the one before; the first shares
		// none (its start is the next one's).
		n := 5 + i%3
		conj := make([]*release.Conjunct, n)
		for j := range n {
			conj[j] = conds[(i/3+j)%len(conds)]
		}
		total += n
		as = append(as, answer{id: int64(i + 1), kind: k, conj: conj, value: float64(i)})
	}
	p, ok := pack(as)
	if !ok {
		t.Fatal("not packed")
	}
	held := 0
	for _, b := range p.conj {
		held += len(b)
	}
	if want := 1000 * (5 + 1 + 1); held != want {
		t.Errorf("%d ids held for %d conditions, want %d", held, total, want)
	}
	i := 0
	for a := range p.all() {
		if !reflect.DeepEqual(a.conj, as[i].conj) {
			t.Fatalf("answer %d given with other conditions", i)
		}
		i++
	}
	if got := p.unpack(); !reflect.DeepEqual(got, as) {
		t.Fatal("unpacked answers differ from the packed ones")
	}
}

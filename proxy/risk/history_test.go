package risk

import (
	"hash/maphash"
	"reflect"
	"testing"

	"countwall/proxy/state/release"
)

// TestHistoryReadOneAtATimeAssessesAsTheReleases: the history audit risk
// and the monitor fill one statement at a time gives the findings and the
// answered counts Assess gives on the releases, per analyst, with the
// analyst filter applied while reading.
func TestHistoryReadOneAtATimeAssessesAsTheReleases(t *testing.T) {
	q := func(b int64) *release.Query {
		return above(b, count("people", eq("suburb", str("s1")), eq("age", num("40"))))
	}
	rs := []release.Release{
		ask(1, "eve", "idp", q(0), 1),
		ask(2, "mallory", "suppress", count("people"), 3000),
		ask(3, "eve", "idp", q(1), 4.1e9),
		ask(4, "mallory", "suppress", count("people", nots(eq("suburb", str("suburb_0015")), gt("age", num("60")))), 2997),
		ask(5, "eve", "idp", q(3), 0),
		{ID: 6, Analyst: "eve", Kind: "set", Outcome: "answered"},
	}
	for _, analyst := range []string{"", "eve", "mallory", "nobody"} {
		h := NewHistory(analyst)
		for _, r := range rs {
			h.Add(r)
		}
		o := Options{Analyst: analyst}
		got, want := AssessHistory(h, o), Assess(rs, o)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("analyst %q: history %+v, releases %+v", analyst, got, want)
		}
		if analyst == "eve" && (len(got) != 1 || got[0].Answered != 3) {
			t.Errorf("eve's report %+v, want one with 3 answered statements", got)
		}
		if analyst == "nobody" && len(got) != 0 {
			t.Errorf("nobody's reports %+v, want none", got)
		}
	}
}

// TestBoxKeysTellApartKeysOfOneHash: two keys whose hashes meet get ids of
// their own, each found again by its parts; a key with one part skipped is
// the key of those parts without it.
func TestBoxKeysTellApartKeysOfOneHash(t *testing.T) {
	ks := newBoxKeys()
	a := ks.id(1, []uint32{7, 8, 9}, -1)
	ctx := ks.id(1, []uint32{7, 8, 9}, 1)
	if same := ks.id(1, []uint32{7, 9}, -1); same != ctx {
		t.Fatalf("{7, 9} has id %d, {7, 8, 9} without 8 has %d", same, ctx)
	}
	// File a under b's hash, as if their hashes met: b, made next, is
	// filed as a clash, and the parts tell the two apart.
	ks.buf = boxKey{ks.partsOf(2, []uint32{7, 8, 9}), -1}.pack(ks.buf[:0])
	ks.first[maphash.Bytes(ks.seed, ks.buf)] = a
	idB := ks.id(2, []uint32{7, 8, 9}, -1)
	if idB == a || len(ks.clashes) != 1 {
		t.Fatalf("b has id %d (a's is %d), clashes %v", idB, a, ks.clashes)
	}
	tests := []struct {
		family uint32
		parts  []uint32
		want   uint32
		found  bool
	}{
		{1, []uint32{7, 8, 9}, a, true},
		{2, []uint32{7, 8, 9}, idB, true},
		{3, []uint32{7, 8, 9}, 0, false},
		{1, []uint32{7, 9}, ctx, true},
	}
	for _, tc := range tests {
		got, ok := ks.lookup(tc.family, tc.parts, -1)
		if ok != tc.found || (ok && got != tc.want) {
			t.Errorf("lookup(%d, %v) = %d, %t; want %d, %t", tc.family, tc.parts, got, ok, tc.want, tc.found)
		}
	}
}

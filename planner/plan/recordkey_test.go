package plan_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"testing"

	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

func TestRecordKey(t *testing.T) {
	// The key is the first four bytes of HMAC-SHA256 over the canonical text.
	reference := func(secret []byte, canonical string) uint32 {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(canonical))
		return binary.BigEndian.Uint32(m.Sum(nil))
	}
	cases := []struct {
		unit      any
		canonical string
	}{
		{int64(42), "42"},
		{int64(-7), "-7"},
		{2.5, "2.5"},
		{1e21, "1e+21"},
		{"alice", "alice"},
		{[]byte("bob"), "bob"},
		{"", ""},
	}
	for _, tc := range cases {
		if got, want := plan.RecordKey(fixture.Secret, tc.unit), reference(fixture.Secret, tc.canonical); got != want {
			t.Errorf("RecordKey(%#v) = %d, want %d", tc.unit, got, want)
		}
	}
	if plan.RecordKey(fixture.Secret, nil) != 0 {
		t.Error("a NULL unit has a key")
	}
	// Stable: the same value always gives the same key, including when the
	// cached hashers are replaced by another secret in between.
	k1 := plan.RecordKey(fixture.Secret, int64(12345))
	_ = plan.RecordKey([]byte("other"), int64(12345))
	if k2 := plan.RecordKey(fixture.Secret, int64(12345)); k1 != k2 {
		t.Errorf("key changed from %d to %d", k1, k2)
	}
	// Secret-dependent: for 1,000 units every key differs between two secrets.
	// Two independent 32-bit keys collide with probability 2^-32, so the chance
	// of a false failure is about 1000 * 2^-32 < 3e-7.
	other := []byte("another secret")
	for u := range int64(1000) {
		if plan.RecordKey(fixture.Secret, u) == plan.RecordKey(other, u) {
			t.Errorf("unit %d has the same key under two secrets", u)
		}
	}
	// A secret buffer reused by the caller does not corrupt the cached key.
	buf := []byte("mutable secret")
	kb := plan.RecordKey(buf, "x")
	copy(buf, "MUTABLE")
	if plan.RecordKey([]byte("mutable secret"), "x") != kb {
		t.Error("the cached hashers kept a reference to the caller's secret")
	}
}

func TestRecordKeyConcurrent(t *testing.T) {
	secrets := [][]byte{[]byte("s1"), []byte("s2"), []byte("s3")}
	want := make([][]uint32, len(secrets))
	for i, s := range secrets {
		for u := range int64(200) {
			want[i] = append(want[i], plan.RecordKey(s, u))
		}
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			i := g % len(secrets)
			for u := range int64(200) {
				if got := plan.RecordKey(secrets[i], u); got != want[i][u] {
					t.Errorf("secret %d unit %d: %d, want %d", i, u, got, want[i][u])
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestCellRank: the rank depends on the secret, the unit and every group
// value, and NULL is apart from the text "N;".
func TestCellRank(t *testing.T) {
	base := plan.CellRank(fixture.Secret, int64(7), "F", int64(30))
	for name, other := range map[string]int64{
		"secret": plan.CellRank([]byte("another secret"), int64(7), "F", int64(30)),
		"unit":   plan.CellRank(fixture.Secret, int64(8), "F", int64(30)),
		"group":  plan.CellRank(fixture.Secret, int64(7), "M", int64(30)),
		"order":  plan.CellRank(fixture.Secret, int64(7), int64(30), "F"),
		"null":   plan.CellRank(fixture.Secret, int64(7), nil, int64(30)),
		"split":  plan.CellRank(fixture.Secret, int64(7), "F3", int64(0)),
	} {
		if other == base {
			t.Errorf("changing the %s did not change the rank", name)
		}
	}
	if plan.CellRank(fixture.Secret, nil, "N;") == plan.CellRank(fixture.Secret, nil, nil) {
		t.Error("NULL and the text N; rank alike")
	}
	if got, again := plan.CellRank(fixture.Secret, int64(7), "F"), plan.CellRank(fixture.Secret, int64(7), "F"); got != again {
		t.Error(fmt.Sprint("rank not deterministic: ", got, again))
	}
}

// rankReference is CellRank as its comment defines it: the first eight
// bytes, big-endian, of HMAC-SHA256(secret, "\x00rank" and each value's
// canonical text followed by its length in four bytes, NULL the length
// 0xFFFFFFFF alone).
func rankReference(secret []byte, canonical ...*string) int64 {
	buf := []byte("\x00rank")
	for _, c := range canonical {
		if c == nil {
			buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32)
			continue
		}
		buf = append(buf, *c...)
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(*c)))
	}
	m := hmac.New(sha256.New, secret)
	m.Write(buf)
	return int64(binary.BigEndian.Uint64(m.Sum(nil)))
}

// TestCellRankEncoding holds CellRank to its definition, value by value: a
// real equal to an integer ranks as that integer (SQLite groups 10^15 and
// 1e15 as one cell), other reals by their shortest text, text and blobs by
// their bytes; CellRankValues, which SQLite calls, ranks as CellRank.
func TestCellRankEncoding(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name      string
		unit      any
		group     []any
		canonical []*string
	}{
		{"integers", int64(7), []any{"F", int64(30)}, []*string{s("7"), s("F"), s("30")}},
		{"no group", int64(-12), nil, []*string{s("-12")}},
		{"an integral real is its integer", int64(7), []any{1e15}, []*string{s("7"), s("1000000000000000")}},
		{"a real", "u1", []any{2.5}, []*string{s("u1"), s("2.5")}},
		{"a blob", []byte("ab"), []any{[]byte{}}, []*string{s("ab"), s("")}},
		{"NULL apart from empty text", nil, []any{nil, ""}, []*string{nil, nil, s("")}},
	} {
		want := rankReference(fixture.Secret, tc.canonical...)
		if got := plan.CellRank(fixture.Secret, tc.unit, tc.group...); got != want {
			t.Errorf("%s: CellRank = %d, want %d", tc.name, got, want)
		}
		values := make([]driver.Value, len(tc.group))
		for i, g := range tc.group {
			values[i] = g
		}
		if got := plan.CellRankValues(fixture.Secret, tc.unit, values); got != want {
			t.Errorf("%s: CellRankValues = %d, want %d", tc.name, got, want)
		}
	}
}

// TestRecordKeyCanonicalForms: the Go types a driver or a caller may hand
// in key as the stored value SQLite would hold: integers of every width in
// decimal, booleans as 1 and 0 (SQLite stores them so), an integral real as
// its integer.
func TestRecordKeyCanonicalForms(t *testing.T) {
	for _, tc := range []struct {
		unit any
		same any
	}{
		{int(42), int64(42)},
		{int32(-5), int64(-5)},
		{uint32(4000000000), int64(4000000000)},
		{uint64(9), int64(9)},
		{true, int64(1)},
		{false, int64(0)},
		{2.0, int64(2)}, // SQLite's distinct units take 2.0 and 2 for one
	} {
		if got, want := plan.RecordKey(fixture.Secret, tc.unit), plan.RecordKey(fixture.Secret, tc.same); got != want {
			t.Errorf("RecordKey(%#v) = %d, RecordKey(%#v) = %d: want them equal", tc.unit, got, tc.same, want)
		}
	}
}

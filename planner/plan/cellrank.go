package plan

import (
	"database/sql/driver"
	"encoding/binary"
	"math"
)

// CellRankFunc is the SQLite scalar function that ranks one unit's cells
// under max_groups_per_unit: countwall_cell_rank(secret BLOB, unit, g0, ...)
// -> INTEGER.
const CellRankFunc = "countwall_cell_rank"

// cellRankDomain separates the inputs of CellRank from those of RecordKey.
const cellRankDomain = "\x00rank"

// CellRank is the keyed hash by which a unit's cells are chosen when it may
// contribute to at most G cells of a query: the first eight bytes
// (big-endian, as an int64) of HMAC-SHA256(secret, unit and group values).
// It depends only on who the unit is, which cell it is and the secret, so an
// analyst can neither predict nor steer the choice, and the data's counts
// play no part in it. Each value is length-prefixed; NULL is marked apart.
func CellRank(secret []byte, unit any, group ...any) int64 {
	values := make([]driver.Value, len(group))
	for i, g := range group {
		values[i] = g
	}
	return CellRankValues(secret, unit, values)
}

// CellRankValues is CellRank over the values SQLite passes, without copying them.
func CellRankValues(secret []byte, unit any, group []driver.Value) int64 {
	hs := hashersFor(secret)
	k := hs.pool.Get().(*keyedHasher)
	k.h.Reset()
	k.buf = append(k.buf[:0], cellRankDomain...)
	k.buf = appendRankValue(k.buf, unit)
	for _, g := range group {
		k.buf = appendRankValue(k.buf, g)
	}
	k.h.Write(k.buf)
	k.sum = k.h.Sum(k.sum[:0])
	rank := int64(binary.BigEndian.Uint64(k.sum))
	if cap(k.buf) > 1024 {
		k.buf = nil
	}
	hs.pool.Put(k)
	return rank
}

// appendRankValue appends one value to dst as its canonical encoding
// followed by its length in four bytes (read from the end, the sequence is
// unambiguous); NULL is the length 0xFFFFFFFF alone. It allocates nothing.
func appendRankValue(dst []byte, v any) []byte {
	if v == nil {
		return binary.BigEndian.AppendUint32(dst, math.MaxUint32)
	}
	start := len(dst)
	if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		// A real equal to an integer is that integer: SQLite groups the
		// integer 10^15 and the real 1e15 as one cell, and either may be
		// the value the cell's rank is computed from.
		v = int64(f)
	}
	dst = canonicalUnit(dst, v)
	return binary.BigEndian.AppendUint32(dst, uint32(min(len(dst)-start, math.MaxUint32-1)))
}

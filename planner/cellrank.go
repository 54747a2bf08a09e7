package planner

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"strconv"

	"modernc.org/sqlite"
)

// cellRankFunc is the SQLite scalar function that ranks one unit's cells
// under max_groups_per_unit: countwall_cell_rank(secret BLOB, unit, g0, ...)
// -> INTEGER.
const cellRankFunc = "countwall_cell_rank"

// cellRankDomain separates the inputs of CellRank from those of RecordKey.
const cellRankDomain = "\x00countwall cell rank\x00"

// CellRank is the keyed hash by which a unit's cells are chosen when it may
// contribute to at most G cells of a query: the first eight bytes
// (big-endian, as an int64) of HMAC-SHA256(secret, unit and group values).
// It depends only on who the unit is, which cell it is and the secret, so an
// analyst can neither predict nor steer the choice, and the data's counts
// play no part in it. Each value is length-prefixed; NULL is marked apart.
func CellRank(secret []byte, unit any, group ...any) int64 {
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

// appendRankValue appends one value, length-prefixed, to dst; NULL is "N;".
func appendRankValue(dst []byte, v any) []byte {
	if v == nil {
		return append(dst, 'N', ';')
	}
	start := len(dst)
	dst = canonicalUnit(dst, v)
	enc := append([]byte(nil), dst[start:]...)
	dst = strconv.AppendInt(dst[:start], int64(len(enc)), 10)
	dst = append(dst, ':')
	return append(dst, enc...)
}

// sqlCellRank is the body of countwall_cell_rank.
func sqlCellRank(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	if len(args) < 2 {
		return nil, fmt.Errorf("%s takes a secret and a unit, got %d arguments", cellRankFunc, len(args))
	}
	secret, ok := args[0].([]byte)
	if !ok {
		return nil, fmt.Errorf("%s: the secret must be a blob", cellRankFunc)
	}
	group := make([]any, len(args)-2)
	for i, a := range args[2:] {
		group[i] = a
	}
	return CellRank(secret, args[1], group...), nil
}

package plan

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"strconv"
	"sync"
	"sync/atomic"
)

// RecordKeyFunc is the SQLite scalar function the compiled SQL calls to key a
// privacy unit: countwall_record_key(secret BLOB, unit) -> INTEGER in [0, 2^32).
const RecordKeyFunc = "countwall_record_key"

// RecordKey is a unit's record key for the cell key method: the first four
// bytes (big-endian) of HMAC-SHA256(secret, canonical(unit)). The canonical
// encoding is the decimal text of an integer, strconv 'g' -1 of a real, and
// the bytes of a text or blob value, so the key depends only on the value and
// the secret: it is stable across restarts and never stored in the data.
// A NULL unit (nil) is not a unit; it gets key 0 and SQL never sums it.
func RecordKey(secret []byte, unit any) uint32 {
	if unit == nil {
		return 0
	}
	hs := hashersFor(secret)
	k := hs.pool.Get().(*keyedHasher)
	k.h.Reset()
	k.buf = canonicalUnit(k.buf[:0], unit)
	k.h.Write(k.buf)
	k.sum = k.h.Sum(k.sum[:0])
	key := binary.BigEndian.Uint32(k.sum)
	if cap(k.buf) > 1024 {
		k.buf = nil // a long text unit should not pin its buffer in the pool
	}
	hs.pool.Put(k)
	return key
}

// canonicalUnit appends the canonical encoding of a unit value to dst.
func canonicalUnit(dst []byte, unit any) []byte {
	switch v := unit.(type) {
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case int:
		return strconv.AppendInt(dst, int64(v), 10)
	case int32:
		return strconv.AppendInt(dst, int64(v), 10)
	case uint32:
		return strconv.AppendUint(dst, uint64(v), 10)
	case uint64:
		return strconv.AppendUint(dst, v, 10)
	case float64:
		return strconv.AppendFloat(dst, v, 'g', -1, 64)
	case string:
		return append(dst, v...)
	case []byte:
		return append(dst, v...)
	case bool:
		// SQLite has no boolean: it stores true and false as 1 and 0.
		if v {
			return append(dst, '1')
		}
		return append(dst, '0')
	default:
		return fmt.Appendf(dst, "%v", v)
	}
}

// keyedHashers hands out HMAC-SHA256 states keyed with one secret. Keying an
// HMAC hashes the padded key twice; reusing keyed states (hmac.Reset restores
// the precomputed inner and outer pads) keeps that cost out of the per-unit
// path, which runs once per contributing unit of every keyed query.
type keyedHashers struct {
	secret string
	pool   sync.Pool // of *keyedHasher
}

// keyedHasher is one pooled HMAC state with its scratch buffers, so that
// keying a unit allocates nothing.
type keyedHasher struct {
	h   hash.Hash
	buf []byte
	sum []byte
}

// lastHashers caches the hashers of the most recent secret. A firewall runs
// with one secret, so a single slot hits every time without a map lookup; a
// different secret (tests, a rotated secret) just replaces it.
var lastHashers atomic.Pointer[keyedHashers]

func hashersFor(secret []byte) *keyedHashers {
	if hs := lastHashers.Load(); hs != nil && hs.secret == string(secret) {
		return hs
	}
	hs := &keyedHashers{secret: string(secret)}
	key := []byte(hs.secret) // a private copy: the caller may reuse secret's array
	hs.pool.New = func() any {
		return &keyedHasher{h: hmac.New(sha256.New, key), buf: make([]byte, 0, 32), sum: make([]byte, 0, sha256.Size)}
	}
	lastHashers.Store(hs)
	return hs
}

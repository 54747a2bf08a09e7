package pgwire

import (
	"encoding/binary"
	"testing"

	"countwall/pgerror"
	"countwall/pgtypes"
)

// binArray builds a binary array as array_send writes one: dimensions,
// flags, element type, each dimension's length and lower bound, then each
// element as its length (-1 for NULL) and bytes.
func binArray(ndim, flags int32, elem pgtypes.OID, dims []int32, elems ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(ndim))
	b = binary.BigEndian.AppendUint32(b, uint32(flags))
	b = binary.BigEndian.AppendUint32(b, uint32(elem))
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
		b = binary.BigEndian.AppendUint32(b, 1)
	}
	for _, e := range elems {
		if e == nil {
			b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(e)))
		b = append(b, e...)
	}
	return b
}

func int8Bytes(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// TestDecodeArray: a binary array parameter reads as the text form of the
// same array, each element by its type's receive function and quoted as
// array_out quotes it (so that the planner reads one form), NULL elements
// and empty arrays included; bad input gets array_recv's SQLSTATE, and
// more than one dimension is refused as a text array of them is.
func TestDecodeArray(t *testing.T) {
	tests := []struct {
		name string
		raw  []byte
		elem pgtypes.OID
		want string
		code pgerror.Code
	}{
		{"int8s", binArray(1, 0, pgtypes.Int8, []int32{3}, int8Bytes(0), int8Bytes(-30), int8Bytes(1<<40)), pgtypes.Int8, "{0,-30,1099511627776}", ""},
		{"with a NULL", binArray(1, 1, pgtypes.Int8, []int32{2}, int8Bytes(7), nil), pgtypes.Int8, "{7,NULL}", ""},
		{"texts quoted", binArray(1, 1, pgtypes.Text, []int32{6}, []byte("a b"), []byte(`q"q`), []byte(`b\s`), []byte("NULL"), []byte(""), nil), pgtypes.Text,
			`{"a b","q\"q","b\\s","NULL","",NULL}`, ""},
		{"plain texts", binArray(1, 0, pgtypes.Text, []int32{2}, []byte("F"), []byte("東京")), pgtypes.Text, "{F,東京}", ""},
		{"empty, no dimensions", binArray(0, 0, pgtypes.Int8, nil), pgtypes.Int8, "{}", ""},
		{"int4s", binArray(1, 0, pgtypes.Int4, []int32{1}, []byte{0, 0, 0, 30}), pgtypes.Int4, "{30}", ""},
		{"two dimensions", binArray(2, 0, pgtypes.Int8, []int32{1, 1}, int8Bytes(1)), pgtypes.Int8, "", pgerror.FeatureNotSupported},
		{"negative dimensions", binArray(-1, 0, pgtypes.Int8, nil), pgtypes.Int8, "", pgerror.InvalidBinaryRepresentation},
		{"bad flags", binArray(1, 2, pgtypes.Int8, []int32{1}, int8Bytes(1)), pgtypes.Int8, "", pgerror.InvalidBinaryRepresentation},
		{"other element type", binArray(1, 0, pgtypes.Text, []int32{1}, []byte("a")), pgtypes.Int8, "", pgerror.DatatypeMismatch},
		{"element too short", binArray(1, 0, pgtypes.Int8, []int32{1}, []byte{0, 0, 0, 1}), pgtypes.Int8, "", pgerror.ProtocolViolation},
		{"element too long", binArray(1, 0, pgtypes.Int8, []int32{1}, append(int8Bytes(1), 0)), pgtypes.Int8, "", pgerror.InvalidBinaryRepresentation},
		{"length beyond the bytes", binArray(1, 0, pgtypes.Int8, []int32{5}, int8Bytes(1)), pgtypes.Int8, "", pgerror.InvalidBinaryRepresentation},
		{"negative length", binArray(1, 0, pgtypes.Int8, []int32{-1}), pgtypes.Int8, "", pgerror.InvalidBinaryRepresentation},
		{"element past the end", append(binArray(1, 0, pgtypes.Int8, []int32{1}), 0, 0, 0, 8, 1), pgtypes.Int8, "", pgerror.InvalidBinaryRepresentation},
		{"bytes left over", append(binArray(1, 0, pgtypes.Int8, []int32{1}, int8Bytes(1)), 0), pgtypes.Int8, "", pgerror.InvalidBinaryRepresentation},
		{"header cut short", []byte{0, 0, 0, 1, 0, 0}, pgtypes.Int8, "", pgerror.ProtocolViolation},
		{"nothing", nil, pgtypes.Int8, "", pgerror.ProtocolViolation},
	}
	for _, tc := range tests {
		got, err := decodeArray(tc.raw, tc.elem, 1)
		if code := pgerror.SQLState(err); got != tc.want || code != tc.code {
			t.Errorf("%s: %q, %v (%s); want %q, %s", tc.name, got, err, code, tc.want, tc.code)
		}
	}
	// Through decodeParam, as Bind reaches it: by the array type's OID.
	if got, err := decodeParam(binArray(1, 0, pgtypes.Int8, []int32{2}, int8Bytes(1), int8Bytes(2)), 1, 1016, 1); err != nil || got != "{1,2}" {
		t.Errorf("bigint[] parameter read as %q, %v", got, err)
	}
}

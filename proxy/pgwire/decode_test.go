package pgwire

import (
	"encoding/binary"
	"math"
	"testing"

	"countwall/pgerror"
	"countwall/pgtypes"
)

// TestDecodeBinaryParams: each binary value is read as PostgreSQL 15's
// receive function reads it (TestPostgresParameterTypesDifferential sends
// the same bytes to a real server): the text the engine gets, or the
// SQLSTATE.
func TestDecodeBinaryParams(t *testing.T) {
	num := func(weight int16, sign, dscale uint16, digits ...int16) []byte {
		b := binary.BigEndian.AppendUint16(nil, uint16(len(digits)))
		b = binary.BigEndian.AppendUint16(b, uint16(weight))
		b = binary.BigEndian.AppendUint16(b, sign)
		b = binary.BigEndian.AppendUint16(b, dscale)
		for _, d := range digits {
			b = binary.BigEndian.AppendUint16(b, uint16(d))
		}
		return b
	}
	f4 := func(f float32) []byte { return binary.BigEndian.AppendUint32(nil, math.Float32bits(f)) }
	f8 := func(f float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)) }
	tests := []struct {
		name string
		oid  pgtypes.OID
		raw  []byte
		want string // the text, or a SQLSTATE
	}{
		{"int2", pgtypes.Int2, []byte{0x80, 0}, "-32768"},
		{"int2 of 3 bytes", pgtypes.Int2, []byte{0, 0, 0}, "22P03"},
		{"int4 of 2 bytes", pgtypes.Int4, []byte{0, 0}, "08P01"},
		{"int8", pgtypes.Int8, binary.BigEndian.AppendUint64(nil, 1<<63), "-9223372036854775808"},
		{"int8 of 4 bytes", pgtypes.Int8, []byte{0, 0, 0, 1}, "08P01"},
		{"float4 0.1 keeps its float4 value", pgtypes.Float4, f4(0.1), "0.1"},
		{"float4 NaN", pgtypes.Float4, f4(float32(math.NaN())), "NaN"},
		{"float8 -Infinity", pgtypes.Float8, f8(math.Inf(-1)), "-Infinity"},
		{"float8 denormal", pgtypes.Float8, f8(5e-324), "5e-324"},
		{"float8 -0", pgtypes.Float8, f8(math.Copysign(0, -1)), "-0"},
		{"numeric 30.5", pgtypes.Numeric, num(0, 0, 1, 30, 5000), "30.5"},
		{"numeric cut to its scale", pgtypes.Numeric, num(0, 0, 0, 30, 5000), "30"},
		{"numeric 0.1", pgtypes.Numeric, num(-1, 0, 1, 1000), "0.1"},
		{"numeric -5", pgtypes.Numeric, num(0, 0x4000, 0, 5), "-5"},
		{"numeric 16777217", pgtypes.Numeric, num(1, 0, 0, 1677, 7217), "16777217"},
		{"numeric 10^8 with a gap", pgtypes.Numeric, num(2, 0, 2, 1), "100000000.00"},
		{"numeric far below one, cut to 0", pgtypes.Numeric, num(-32768, 0, 0, 1), "0"},
		{"numeric NaN", pgtypes.Numeric, num(0, 0xC000, 0), "NaN"},
		{"numeric Infinity", pgtypes.Numeric, num(0, 0xD000, 0), "Infinity"},
		{"numeric -Infinity", pgtypes.Numeric, num(0, 0xF000, 0), "-Infinity"},
		{"numeric of no such sign", pgtypes.Numeric, num(0, 0x8000, 0), "22P03"},
		{"numeric scale past 16383", pgtypes.Numeric, num(0, 0, 0x4000), "22P03"},
		{"numeric digit past 9999", pgtypes.Numeric, num(0, 0, 0, 10000), "22P03"},
		{"numeric cut short", pgtypes.Numeric, num(0, 0, 0, 30)[:9], "08P01"},
		{"numeric with a byte too many", pgtypes.Numeric, append(num(0, 0, 0, 30), 0), "22P03"},
		{"numeric without its header", pgtypes.Numeric, []byte{0, 1}, "08P01"},
		{"name of 63 bytes", pgtypes.Name, make([]byte, 63), string(make([]byte, 63))},
		{"name of 64 bytes", pgtypes.Name, make([]byte, 64), "42622"},
		{`"char"`, pgtypes.Char, []byte("a"), "a"},
		{`"char" past ASCII, as its octal escape`, pgtypes.Char, []byte{0xe9}, `\351`},
		{`"char" zero`, pgtypes.Char, []byte{0}, ""},
		{`"char" of no byte`, pgtypes.Char, nil, "08P01"},
		{`"char" of two bytes`, pgtypes.Char, []byte("ab"), "22P03"},
		{"character keeps its padding for the engine", pgtypes.BPChar, []byte("ab  "), "ab  "},
		{"a date has no binary form here", pgtypes.Date, []byte{0, 0, 0, 0}, "22P03"},
	}
	for _, tc := range tests {
		got, err := decodeParam(tc.raw, 1, tc.oid, 1)
		if err != nil {
			got = pgerror.SQLState(err).String()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q (%v)", tc.name, got, tc.want, err)
		}
	}
}

// FuzzDecodeParam: no bytes make a binary value's reading panic, and each
// refusal carries a SQLSTATE.
func FuzzDecodeParam(f *testing.F) {
	f.Add(uint32(pgtypes.Numeric), []byte{0, 1, 0x80, 0, 0, 0, 0x3f, 0xff, 0x27, 0x0f})
	f.Add(uint32(pgtypes.Char), []byte{0xff})
	f.Add(uint32(pgtypes.Int8), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, oid uint32, raw []byte) {
		if _, err := decodeParam(raw, 1, pgtypes.OID(oid), 1); err != nil && len(pgerror.SQLState(err)) != 5 {
			t.Fatalf("oid %d %x: %v has no SQLSTATE", oid, raw, err)
		}
	})
}

package pgwire

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/pgtypes"
	"countwall/proxy"
)

// PostgreSQL type OIDs of the output columns.
const (
	oidInt8   = uint32(pgtypes.Int8)
	oidText   = uint32(pgtypes.Text)
	oidFloat8 = uint32(pgtypes.Float8)
)

func typeOID(t proxy.ColumnType) uint32 {
	switch t {
	case proxy.ColumnInt8:
		return oidInt8
	case proxy.ColumnFloat8:
		return oidFloat8
	case proxy.ColumnBool:
		return oidBool
	case proxy.ColumnTextArray:
		return oidTextArray
	case proxy.ColumnInt8Array:
		return oidInt8Array
	case proxy.ColumnNumeric:
		return oidNumeric
	case proxy.ColumnVarchar:
		return uint32(pgtypes.Varchar)
	default:
		return oidText
	}
}

func typeSize(t proxy.ColumnType) int16 {
	switch t {
	case proxy.ColumnText, proxy.ColumnVarchar, proxy.ColumnTextArray, proxy.ColumnInt8Array, proxy.ColumnNumeric:
		return -1
	case proxy.ColumnBool:
		return 1
	}
	return 8
}

// formatFor applies the protocol's format-code rules: none means text, one
// applies to all, otherwise one per column.
func formatFor(codes []int16, i int) int16 {
	switch {
	case len(codes) == 0:
		return 0
	case len(codes) == 1:
		return codes[0]
	case i < len(codes):
		return codes[i]
	}
	return 0
}

// encoder builds a connection's RowDescription, DataRow and
// CommandComplete messages in storage it keeps: pgproto3 encodes a message
// into its write buffer as it is sent, so one of each, and one byte buffer
// for their fields, serve every statement of the session.
type encoder struct {
	rd  pgproto3.RowDescription
	dr  pgproto3.DataRow
	cc  pgproto3.CommandComplete
	buf []byte
}

// rowDescription describes cols; valid until the encoder's next call.
func (e *encoder) rowDescription(cols []proxy.Column, formats []int16) *pgproto3.RowDescription {
	e.buf = e.buf[:0]
	e.rd.Fields = e.rd.Fields[:0]
	for i, c := range cols {
		e.rd.Fields = append(e.rd.Fields, pgproto3.FieldDescription{
			Name: e.appendField(c.Name), DataTypeOID: typeOID(c.Type), DataTypeSize: typeSize(c.Type),
			TypeModifier: -1, Format: formatFor(formats, i),
		})
	}
	return &e.rd
}

// appendField appends s to e.buf and returns the bytes it took there.
func (e *encoder) appendField(s string) []byte {
	start := len(e.buf)
	e.buf = append(e.buf, s...)
	return e.buf[start:len(e.buf):len(e.buf)]
}

// dataRow encodes one row; valid until the encoder's next call.
func (e *encoder) dataRow(cols []proxy.Column, row []proxy.Value, formats []int16) *pgproto3.DataRow {
	if e.buf == nil {
		// A nil value is SQL NULL: an empty text must slice a buffer that
		// exists.
		e.buf = make([]byte, 0, 256)
	}
	e.buf = e.buf[:0]
	e.dr.Values = e.dr.Values[:0]
	for i, v := range row {
		if v.Null {
			e.dr.Values = append(e.dr.Values, nil) // nil is SQL NULL
			continue
		}
		e.dr.Values = append(e.dr.Values, e.appendValue(cols[i].Type, v, formatFor(formats, i) == 1))
	}
	return &e.dr
}

// appendValue encodes one non-NULL value of type t in text or binary form.
func (e *encoder) appendValue(t proxy.ColumnType, v proxy.Value, binaryFormat bool) []byte {
	start := len(e.buf)
	switch t {
	case proxy.ColumnInt8:
		if binaryFormat {
			e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v.Int))
		} else {
			e.buf = strconv.AppendInt(e.buf, v.Int, 10)
		}
	case proxy.ColumnFloat8:
		if binaryFormat {
			e.buf = binary.BigEndian.AppendUint64(e.buf, math.Float64bits(v.Float))
		} else {
			e.buf = append(e.buf, pgtypes.FormatFloat8(v.Float)...)
		}
	case proxy.ColumnNumeric:
		if binaryFormat {
			e.buf = appendNumericBinary(e.buf, v.Text)
		} else {
			e.buf = append(e.buf, v.Text...)
		}
	case proxy.ColumnBool:
		return encodeBool(v.Int != 0, binaryFormat)
	case proxy.ColumnTextArray, proxy.ColumnInt8Array:
		return encodeArray(v.Text, typeOID(t), binaryFormat)
	default:
		e.buf = append(e.buf, v.Text...)
	}
	return e.buf[start:len(e.buf):len(e.buf)]
}

// commandComplete is the message carrying tag; valid until the encoder's
// next call.
func (e *encoder) commandComplete(tag string) *pgproto3.CommandComplete {
	e.buf = append(e.buf[:0], tag...)
	e.cc.CommandTag = e.buf
	return &e.cc
}

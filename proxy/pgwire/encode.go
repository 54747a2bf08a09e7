package pgwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/proxy"
)

// PostgreSQL type OIDs used on the wire.
const (
	oidInt2    = 21
	oidInt4    = 23
	oidInt8    = 20
	oidText    = 25
	oidFloat4  = 700
	oidFloat8  = 701
	oidVarchar = 1043
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
	default:
		return oidText
	}
}

func typeSize(t proxy.ColumnType) int16 {
	switch t {
	case proxy.ColumnText, proxy.ColumnTextArray, proxy.ColumnInt8Array:
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

func rowDescription(cols []proxy.Column, formats []int16) *pgproto3.RowDescription {
	rd := &pgproto3.RowDescription{Fields: make([]pgproto3.FieldDescription, len(cols))}
	for i, c := range cols {
		rd.Fields[i] = pgproto3.FieldDescription{
			Name: []byte(c.Name), DataTypeOID: typeOID(c.Type), DataTypeSize: typeSize(c.Type),
			TypeModifier: -1, Format: formatFor(formats, i),
		}
	}
	return rd
}

func dataRow(cols []proxy.Column, row []proxy.Value, formats []int16) *pgproto3.DataRow {
	dr := &pgproto3.DataRow{Values: make([][]byte, len(row))}
	for i, v := range row {
		if v.Null {
			continue // nil is SQL NULL
		}
		binaryFormat := formatFor(formats, i) == 1
		switch cols[i].Type {
		case proxy.ColumnInt8:
			if binaryFormat {
				dr.Values[i] = binary.BigEndian.AppendUint64(nil, uint64(v.Int))
			} else {
				dr.Values[i] = strconv.AppendInt(nil, v.Int, 10)
			}
		case proxy.ColumnFloat8:
			if binaryFormat {
				dr.Values[i] = binary.BigEndian.AppendUint64(nil, math.Float64bits(v.Float))
			} else {
				dr.Values[i] = strconv.AppendFloat(nil, v.Float, 'g', -1, 64)
			}
		case proxy.ColumnBool:
			dr.Values[i] = encodeBool(v.Int != 0, binaryFormat)
		case proxy.ColumnTextArray, proxy.ColumnInt8Array:
			dr.Values[i] = encodeArray(v.Text, typeOID(cols[i].Type), binaryFormat)
		default:
			dr.Values[i] = []byte(v.Text)
		}
	}
	return dr
}

// decodeParam turns a bound parameter into the text form the engine binds.
func decodeParam(raw []byte, format int16, oid uint32) (string, error) {
	if format == 0 {
		return string(raw), nil
	}
	if format != 1 {
		return "", fmt.Errorf("unknown format code %d", format)
	}
	switch oid {
	case oidInt2:
		if len(raw) != 2 {
			return "", errors.New("binary int2 needs 2 bytes")
		}
		return strconv.FormatInt(int64(int16(binary.BigEndian.Uint16(raw))), 10), nil
	case oidInt4:
		if len(raw) != 4 {
			return "", errors.New("binary int4 needs 4 bytes")
		}
		return strconv.FormatInt(int64(int32(binary.BigEndian.Uint32(raw))), 10), nil
	case oidInt8:
		if len(raw) != 8 {
			return "", errors.New("binary int8 needs 8 bytes")
		}
		return strconv.FormatInt(int64(binary.BigEndian.Uint64(raw)), 10), nil
	case oidFloat4:
		if len(raw) != 4 {
			return "", errors.New("binary float4 needs 4 bytes")
		}
		return strconv.FormatFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(raw))), 'g', -1, 32), nil
	case oidFloat8:
		if len(raw) != 8 {
			return "", errors.New("binary float8 needs 8 bytes")
		}
		return strconv.FormatFloat(math.Float64frombits(binary.BigEndian.Uint64(raw)), 'g', -1, 64), nil
	case oidText, oidVarchar, 0:
		return string(raw), nil
	}
	return "", fmt.Errorf("binary format for type %d is not supported; send it as text", oid)
}

package pgwire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"countwall/pgerror"
	"countwall/pgtypes"
)

// decodeParam turns bound parameter n (1-based), of type oid, into the text
// its type's input function reads as the same value, so that the engine
// reads one form. A binary value is read as PostgreSQL's receive function
// for the type reads it: too few bytes is 08P01 ("insufficient data left
// in message"), bytes left over or a field out of its range 22P03.
func decodeParam(raw []byte, format int16, oid pgtypes.OID, n int) (string, error) {
	if format == 0 {
		return string(raw), nil
	}
	switch oid {
	case pgtypes.Int2, pgtypes.Int4, pgtypes.Int8:
		size := map[pgtypes.OID]int{pgtypes.Int2: 2, pgtypes.Int4: 4, pgtypes.Int8: 8}[oid]
		if err := fixedSize(raw, size, oid, n); err != nil {
			return "", err
		}
		return strconv.FormatInt(signedBigEndian(raw), 10), nil
	case pgtypes.Float4:
		if err := fixedSize(raw, 4, oid, n); err != nil {
			return "", err
		}
		return formatFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(raw))), 32), nil
	case pgtypes.Float8:
		if err := fixedSize(raw, 8, oid, n); err != nil {
			return "", err
		}
		return formatFloat(math.Float64frombits(binary.BigEndian.Uint64(raw)), 64), nil
	case pgtypes.Numeric:
		return decodeNumeric(raw, n)
	case pgtypes.Name:
		if len(raw) > 63 {
			return "", pgerror.Errorf(pgerror.NameTooLong, "identifier too long: bind parameter %d is a name of %d bytes, and a name has at most 63", n, len(raw))
		}
		return string(raw), nil
	case pgtypes.Char:
		return decodeChar(raw, n)
	case pgtypes.Text, pgtypes.Varchar, pgtypes.BPChar, pgtypes.Unknown, pgtypes.Unspecified:
		return string(raw), nil
	}
	if oid.IsInputless() {
		return string(raw), nil // its input refuses every value, as the engine says
	}
	if elem, ok := pgtypes.Element(oid); ok {
		return decodeArray(raw, elem, n)
	}
	return "", pgerror.Errorf(pgerror.InvalidBinaryRepresentation, "bind parameter %d: binary format for type %s is not supported; send it as text", n, oid.Name())
}

// fixedSize checks a fixed-size binary value's length.
func fixedSize(raw []byte, size int, oid pgtypes.OID, n int) error {
	switch {
	case len(raw) < size:
		return pgerror.Errorf(pgerror.ProtocolViolation, "insufficient data left in message: bind parameter %d, of type %s, needs %d bytes and has %d", n, oid.Name(), size, len(raw))
	case len(raw) > size:
		return incorrectBinary(n, fmt.Sprintf("a %s takes %d bytes, and %d were sent", oid.Name(), size, len(raw)))
	}
	return nil
}

func incorrectBinary(n int, why string) error {
	return pgerror.Errorf(pgerror.InvalidBinaryRepresentation, "incorrect binary data format in bind parameter %d: %s", n, why)
}

// signedBigEndian is a 2, 4 or 8-byte big-endian two's complement integer.
func signedBigEndian(raw []byte) int64 {
	switch len(raw) {
	case 2:
		return int64(int16(binary.BigEndian.Uint16(raw)))
	case 4:
		return int64(int32(binary.BigEndian.Uint32(raw)))
	}
	return int64(binary.BigEndian.Uint64(raw))
}

// formatFloat is f in the shortest text that reads back as the same value
// of its width, with PostgreSQL's spellings of the non-finite values.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// decodeChar reads a binary "char": exactly one byte. Its text is the byte
// itself, or, past ASCII, the backslash-octal form "char" input reads as
// that byte; the zero byte is the empty string.
func decodeChar(raw []byte, n int) (string, error) {
	switch {
	case len(raw) == 0:
		return "", pgerror.Errorf(pgerror.ProtocolViolation, `no data left in message: bind parameter %d, a "char", needs one byte`, n)
	case len(raw) > 1:
		return "", incorrectBinary(n, fmt.Sprintf(`a "char" is one byte, and %d were sent`, len(raw)))
	case raw[0] == 0:
		return "", nil
	case raw[0] >= 0x80:
		return fmt.Sprintf(`\%03o`, raw[0]), nil
	}
	return string(raw), nil
}

// The sign field of a binary numeric.
const (
	numericPos  = 0x0000
	numericNeg  = 0x4000
	numericNaN  = 0xC000
	numericPInf = 0xD000
	numericNInf = 0xF000
)

// decodeNumeric reads a binary numeric as numeric_recv does: the count of
// base-10000 digits, the weight of the first, the sign, the display scale
// (at most 16383 decimal digits after the point), then the digits, each
// below 10000. Digits past the display scale are dropped, as numeric_recv
// truncates them. The text has exactly the display scale's decimals.
func decodeNumeric(raw []byte, n int) (string, error) {
	if len(raw) < 8 {
		return "", pgerror.Errorf(pgerror.ProtocolViolation, "insufficient data left in message: bind parameter %d, a numeric, has %d bytes of its 8-byte header", n, len(raw))
	}
	ndigits := int(binary.BigEndian.Uint16(raw[0:2]))
	weight := int(int16(binary.BigEndian.Uint16(raw[2:4])))
	sign := binary.BigEndian.Uint16(raw[4:6])
	dscale := int(binary.BigEndian.Uint16(raw[6:8]))
	switch sign {
	case numericPos, numericNeg, numericNaN, numericPInf, numericNInf:
	default:
		return "", pgerror.Errorf(pgerror.InvalidBinaryRepresentation, `invalid sign in external "numeric" value (bind parameter %d)`, n)
	}
	if dscale > 0x3FFF {
		return "", pgerror.Errorf(pgerror.InvalidBinaryRepresentation, `invalid scale in external "numeric" value (bind parameter %d)`, n)
	}
	digits := make([]int, ndigits)
	rest := raw[8:]
	for i := range digits {
		if len(rest) < 2 {
			return "", pgerror.Errorf(pgerror.ProtocolViolation, "insufficient data left in message: bind parameter %d, a numeric of %d digits, ends after %d", n, ndigits, i)
		}
		d := int(int16(binary.BigEndian.Uint16(rest)))
		if d < 0 || d >= 10000 {
			return "", pgerror.Errorf(pgerror.InvalidBinaryRepresentation, `invalid digit in external "numeric" value (bind parameter %d)`, n)
		}
		digits[i], rest = d, rest[2:]
	}
	if len(rest) > 0 {
		return "", incorrectBinary(n, fmt.Sprintf("%d bytes follow the numeric's digits", len(rest)))
	}
	switch sign {
	case numericNaN:
		return "NaN", nil
	case numericPInf:
		return "Infinity", nil
	case numericNInf:
		return "-Infinity", nil
	}
	return numericText(sign == numericNeg, weight, digits, dscale), nil
}

// numericText is the decimal text of base-10000 digits whose first has
// the given weight, with exactly dscale decimals (later ones dropped).
func numericText(neg bool, weight int, digits []int, dscale int) string {
	digitAt := func(pos int) int {
		if i := weight - pos; i >= 0 && i < len(digits) {
			return digits[i]
		}
		return 0
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if weight < 0 {
		b.WriteByte('0')
	}
	for pos := weight; pos >= 0; pos-- {
		if pos == weight {
			b.WriteString(strconv.Itoa(digitAt(pos)))
		} else {
			fmt.Fprintf(&b, "%04d", digitAt(pos))
		}
	}
	if dscale > 0 {
		var frac strings.Builder
		for pos := -1; frac.Len() < dscale; pos-- {
			fmt.Fprintf(&frac, "%04d", digitAt(pos))
		}
		b.WriteByte('.')
		b.WriteString(frac.String()[:dscale])
	}
	return b.String()
}

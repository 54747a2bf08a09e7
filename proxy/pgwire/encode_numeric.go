package pgwire

import (
	"encoding/binary"
	"strings"
)

// oidNumeric is numeric's type OID: SUM and AVG over an integer column.
const oidNumeric = uint32(1700)

// appendNumericBinary appends numeric's binary form of the decimal text s
// (an optional minus, digits, an optional point and decimals, as
// pgtypes.FormatNumericAvg writes them): the count of base-10000 digits, the
// weight of the first, the sign, the display scale (the decimals written),
// then the digits, leading and trailing zero digits left out as
// PostgreSQL's numeric_send leaves them.
func appendNumericBinary(buf []byte, s string) []byte {
	sign := uint16(0)
	if strings.HasPrefix(s, "-") {
		sign, s = 0x4000, s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	whole = strings.TrimLeft(whole, "0")
	dscale := len(frac)
	// Pad the whole part on the left and the decimals on the right to whole
	// base-10000 digits.
	if r := len(whole) % 4; r != 0 {
		whole = strings.Repeat("0", 4-r) + whole
	}
	if r := len(frac) % 4; r != 0 {
		frac += strings.Repeat("0", 4-r)
	}
	all := whole + frac
	digits := make([]int16, 0, len(all)/4)
	for i := 0; i < len(all); i += 4 {
		d := 0
		for _, c := range all[i : i+4] {
			d = d*10 + int(c-'0')
		}
		digits = append(digits, int16(d))
	}
	weight := len(whole)/4 - 1
	for len(digits) > 0 && digits[0] == 0 {
		digits, weight = digits[1:], weight-1
	}
	for len(digits) > 0 && digits[len(digits)-1] == 0 {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		weight, sign = 0, 0
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(digits)))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(dscale))
	for _, d := range digits {
		buf = binary.BigEndian.AppendUint16(buf, uint16(d))
	}
	return buf
}

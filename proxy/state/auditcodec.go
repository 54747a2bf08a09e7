package state

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"

	"countwall/proxy/state/release"
)

// An audit row keeps a statement's constants and its released cells as two
// small blobs rather than as text: most statements of an attack differ only
// in a few integers and a 0/1 answer, so a row costs a few bytes beyond its
// time, its interned context and its interned shape.
//
// Every value starts with one uvarint h whose low two bits say what it is:
//
//	h&3 == 0   an integer, zigzag(v) = h>>2 (a number constant whose text
//	           is the integer's canonical decimal, or an integer answer)
//	h&3 == 1   a string of h>>2 bytes, which follow
//	h&3 == 3   a number's text of h>>2 bytes, which follow
//	h == 2     a float64, 8 bytes little endian, follow
//	h == 6     NULL
//	other h&3 == 2   a string kept once in audit_text, whose id is (h>>2)-2
//	           (a statement's longer string constants: an attack repeats the
//	           same few in hundreds of thousands of statements)
const (
	tagInt    = 0
	tagString = 1
	tagFloat  = 2
	tagNumber = 3
	tagNull   = 6
	tagRef    = 10 // any h with h&3 == 2 and h>>2 >= 2
)

// minInternedString is the shortest string constant kept by reference.
const minInternedString = 4

// textRef interns a string and returns its id.
type textRef func(text string) (int64, error)

// textOf resolves an interned string's id.
type textOf func(id int64) (string, error)

var errBadBlob = errors.New("audit row holds a malformed value")

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// canonicalInt reads text as an integer whose decimal is exactly text.
func canonicalInt(text string) (int64, bool) {
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != text || v > math.MaxInt64>>2 || v < math.MinInt64>>2 {
		return 0, false
	}
	return v, true
}

func appendText(b []byte, tag uint64, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s))<<2|tag)
	return append(b, s...)
}

func appendInt(b []byte, v int64) []byte { return binary.AppendUvarint(b, zigzag(v)<<2|tagInt) }

func appendFloat(b []byte, f float64) []byte {
	b = binary.AppendUvarint(b, tagFloat)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

// encodeConstants packs a statement's constants; nil for none. ref, when
// set, interns the longer strings.
func encodeConstants(cs []release.Constant, ref textRef) ([]byte, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	var b []byte
	for _, c := range cs {
		if c.String && ref != nil && len(c.Text) >= minInternedString {
			id, err := ref(c.Text)
			if err != nil {
				return nil, err
			}
			b = binary.AppendUvarint(b, uint64(id+2)<<2|tagFloat)
		} else if c.String {
			b = appendText(b, tagString, c.Text)
		} else if v, ok := canonicalInt(c.Text); ok {
			b = appendInt(b, v)
		} else {
			b = appendText(b, tagNumber, c.Text)
		}
	}
	return b, nil
}

// decoder reads values from a blob.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) more() bool { return d.err == nil && len(d.b) > 0 }

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errBadBlob
		return 0
	}
	d.b = d.b[n:]
	return v
}

// value reads one value: its tag, its integer or float, its text.
func (d *decoder) value() (tag uint64, i int64, f float64, text string) {
	h := d.uvarint()
	if d.err != nil {
		return 0, 0, 0, ""
	}
	switch {
	case h == tagFloat:
		if len(d.b) < 8 {
			d.err = errBadBlob
			return 0, 0, 0, ""
		}
		f = math.Float64frombits(binary.LittleEndian.Uint64(d.b))
		d.b = d.b[8:]
		return tagFloat, 0, f, ""
	case h == tagNull:
		return tagNull, 0, 0, ""
	case h&3 == tagFloat:
		return tagRef, int64(h>>2) - 2, 0, ""
	case h&3 == tagInt:
		return tagInt, unzigzag(h >> 2), 0, ""
	case h&3 == tagString || h&3 == tagNumber:
		n := h >> 2
		if uint64(len(d.b)) < n {
			d.err = errBadBlob
			return 0, 0, 0, ""
		}
		text = string(d.b[:n])
		d.b = d.b[n:]
		return h & 3, 0, 0, text
	}
	d.err = errBadBlob
	return 0, 0, 0, ""
}

func decodeConstants(b []byte, resolve textOf) ([]release.Constant, error) {
	d := &decoder{b: b}
	var out []release.Constant
	for d.more() {
		tag, i, _, text := d.value()
		switch tag {
		case tagRef:
			if resolve == nil {
				return nil, errBadBlob
			}
			t, err := resolve(i)
			if err != nil {
				return nil, err
			}
			out = append(out, release.Constant{Text: t, String: true})
		case tagInt:
			out = append(out, release.Constant{Text: strconv.FormatInt(i, 10)})
		case tagString:
			out = append(out, release.Constant{Text: text, String: true})
		case tagNumber:
			out = append(out, release.Constant{Text: text})
		default:
			d.err = errBadBlob
		}
	}
	return out, d.err
}

// encodeCells packs released rows: a header, uvarint(groups<<1 | float)
// where groups is the number of GROUP BY values of each row and float says
// the answers were sent as real numbers; then per row uvarint(suppressed),
// its group values and its value. An answer with an integral value is
// stored as an integer whatever its column's type. A row of a query with
// SUM or AVG sets the flag's second bit and ends with uvarint(n) and its n
// aggregates' texts.
func encodeCells(cells []release.Cell) []byte {
	if len(cells) == 0 {
		return nil
	}
	groups := len(cells[0].Group)
	header := uint64(groups) << 1
	if cells[0].IsFloat {
		header |= 1
	}
	b := binary.AppendUvarint(nil, header)
	for _, c := range cells {
		flag := uint64(0)
		if c.Suppressed {
			flag = 1
		}
		if c.Aggregates != nil {
			flag |= 2
		}
		b = binary.AppendUvarint(b, flag)
		for i := 0; i < groups; i++ {
			if i >= len(c.Group) || c.Group[i].Null {
				b = binary.AppendUvarint(b, tagNull)
				continue
			}
			b = appendText(b, tagString, c.Group[i].Text)
		}
		if c.Value == math.Trunc(c.Value) && math.Abs(c.Value) < 1<<52 {
			b = appendInt(b, int64(c.Value))
		} else {
			b = appendFloat(b, c.Value)
		}
		if c.Aggregates != nil {
			b = binary.AppendUvarint(b, uint64(len(c.Aggregates)))
			for _, a := range c.Aggregates {
				if a.Null {
					b = binary.AppendUvarint(b, tagNull)
				} else {
					b = appendText(b, tagString, a.Text)
				}
			}
		}
	}
	return b
}

func decodeCells(b []byte) ([]release.Cell, error) {
	if len(b) == 0 {
		return nil, nil
	}
	d := &decoder{b: b}
	header := d.uvarint()
	groups, isFloat := int(header>>1), header&1 == 1
	var out []release.Cell
	for d.more() {
		flag := d.uvarint()
		c := release.Cell{Suppressed: flag&1 == 1, IsFloat: isFloat}
		for i := 0; i < groups && d.err == nil; i++ {
			tag, _, _, text := d.value()
			c.Group = append(c.Group, release.Datum{Null: tag == tagNull, Text: text})
		}
		tag, i, f, _ := d.value()
		switch tag {
		case tagInt:
			c.Value = float64(i)
		case tagFloat:
			c.Value = f
		default:
			d.err = errBadBlob
		}
		if flag&2 != 0 {
			n := d.uvarint()
			for k := uint64(0); k < n && d.err == nil; k++ {
				tag, _, _, text := d.value()
				c.Aggregates = append(c.Aggregates, release.Datum{Null: tag == tagNull, Text: text})
			}
		}
		out = append(out, c)
	}
	return out, d.err
}

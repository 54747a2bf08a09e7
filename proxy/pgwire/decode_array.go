package pgwire

import (
	"encoding/binary"
	"fmt"

	"countwall/pgerror"
	"countwall/pgtypes"
)

// decodeArray reads a binary array (array_recv: the number of dimensions,
// a flags word, the element type, each dimension's length and lower
// bound, then each element as a length, -1 for NULL, and its bytes) into
// its text form, each element read by elem's receive function. pgx sends
// a []int64 or a []string bound to ANY($1) this way. A count compares a
// column with a list: more than one dimension is refused.
func decodeArray(raw []byte, elem pgtypes.OID, n int) (string, error) {
	word := func() (int32, error) {
		if len(raw) < 4 {
			return 0, pgerror.Errorf(pgerror.ProtocolViolation, "insufficient data left in message: bind parameter %d, an array, ends inside a length", n)
		}
		v := int32(binary.BigEndian.Uint32(raw))
		raw = raw[4:]
		return v, nil
	}
	ndim, err := word()
	if err != nil {
		return "", err
	}
	flags, err := word() // has NULLs, which the lengths tell again
	if err != nil {
		return "", err
	}
	sent, err := word()
	if err != nil {
		return "", err
	}
	switch {
	case ndim < 0:
		return "", incorrectBinary(n, fmt.Sprintf("invalid number of dimensions: %d", ndim))
	case flags != 0 && flags != 1:
		return "", incorrectBinary(n, "invalid array flags")
	case pgtypes.OID(sent) != elem:
		return "", pgerror.Errorf(pgerror.DatatypeMismatch, "binary data has array element type %d (%s) instead of expected %d (%s): bind parameter %d",
			sent, pgtypes.OID(sent).Name(), elem, elem.Name(), n)
	case ndim == 0:
		return "{}", nil
	case ndim != 1:
		return "", pgerror.Errorf(pgerror.FeatureNotSupported, "bind parameter %d is an array of %d dimensions, which ANY and ALL do not take here", n, ndim)
	}
	length, err := word()
	if err == nil {
		_, err = word() // the lower bound
	}
	if err != nil {
		return "", err
	}
	if length < 0 || int(length) > len(raw)/4 {
		return "", incorrectBinary(n, "an array length beyond its bytes")
	}
	elems := make([]*string, length)
	for i := range elems {
		size, err := word()
		if err != nil {
			return "", err
		}
		if size < 0 {
			continue // NULL
		}
		if int(size) > len(raw) {
			return "", incorrectBinary(n, "insufficient data left in message")
		}
		text, err := decodeParam(raw[:size], 1, elem, n)
		if err != nil {
			return "", err
		}
		elems[i], raw = &text, raw[size:]
	}
	if len(raw) > 0 {
		return "", incorrectBinary(n, "bytes left over after the array")
	}
	return pgtypes.FormatArray(elems), nil
}

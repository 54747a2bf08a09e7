package catalog

import (
	"encoding/json"
	"math"

	"github.com/jackc/pgx/v5/pgtype"
)

// Array values live in the catalog database as JSON text (so that
// json_each can answer = ANY); they leave as PostgreSQL arrays.
const (
	WireTextArray WireType = iota + 100 // text[], a PostgreSQL array literal in Value.Text
	WireInt8Array                       // int8[], likewise
)

// arrayKind says whether every value of a column is a JSON array, and of
// what: an int8 array when every element is an integer, else text.
func arrayKind(rows [][]any, i int) (WireType, bool) {
	kind, seen := WireInt8Array, false
	for _, r := range rows {
		if r[i] == nil {
			continue
		}
		elems, ok := jsonArray(r[i])
		if !ok {
			return 0, false
		}
		seen = true
		for _, e := range elems {
			if f, isNum := e.(float64); !isNum || f != math.Trunc(f) {
				kind = WireTextArray
			}
		}
	}
	return kind, seen
}

var arrayCodecs = pgtype.NewMap()

// arrayLiteral renders a JSON array as PostgreSQL's text form of the array
// ({id,age}, with PostgreSQL's quoting).
func arrayLiteral(v any, kind WireType) string {
	elems, _ := jsonArray(v)
	var buf []byte
	var err error
	if kind == WireInt8Array {
		ints := make([]*int64, len(elems))
		for i, e := range elems {
			if f, ok := e.(float64); ok {
				n := int64(f)
				ints[i] = &n
			}
		}
		buf, err = arrayCodecs.Encode(pgtype.Int8ArrayOID, pgtype.TextFormatCode, ints, nil)
	} else {
		texts := make([]*string, len(elems))
		for i, e := range elems {
			if e != nil {
				s := jsonText(e)
				texts[i] = &s
			}
		}
		buf, err = arrayCodecs.Encode(pgtype.TextArrayOID, pgtype.TextFormatCode, texts, nil)
	}
	if err != nil {
		return "{}"
	}
	return string(buf)
}

// jsonText is an element's text: strings as they are, anything else as JSON.
func jsonText(e any) string {
	if s, ok := e.(string); ok {
		return s
	}
	b, _ := json.Marshal(e)
	return string(b)
}

package catalog

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5/pgtype"
	"modernc.org/sqlite"
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

// sqlArray is an array operand as JSON: a parameter or a literal arrives
// in PostgreSQL's text form ('{r,p,""}', as psycopg and pgspecial send a
// list), a catalog column is JSON already.
func sqlArray(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	s, ok := args[0].(string)
	if !ok {
		return args[0], nil
	}
	if _, isJSON := jsonArray(s); isJSON {
		return s, nil
	}
	var elems []*string
	if err := arrayCodecs.Scan(pgtype.TextArrayOID, pgtype.TextFormatCode, []byte(s), &elems); err != nil {
		return nil, fmt.Errorf("malformed array literal")
	}
	b, err := json.Marshal(elems)
	if err != nil {
		return nil, fmt.Errorf("malformed array literal")
	}
	return string(b), nil
}

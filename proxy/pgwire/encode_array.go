package pgwire

import "github.com/jackc/pgx/v5/pgtype"

// Array types schema discovery sends (array_agg, name[] and oid[] columns).
const (
	oidTextArray = pgtype.TextArrayOID
	oidInt8Array = pgtype.Int8ArrayOID
)

var arrayCodecs = pgtype.NewMap()

// encodeArray sends an array given in PostgreSQL's text form: as it is in
// text format, re-encoded by pgx's codecs in binary format.
func encodeArray(text string, oid uint32, binaryFormat bool) []byte {
	if !binaryFormat {
		return []byte(text)
	}
	var buf []byte
	var err error
	if oid == oidInt8Array {
		var ints []*int64
		if err = arrayCodecs.Scan(oid, pgtype.TextFormatCode, []byte(text), &ints); err == nil {
			buf, err = arrayCodecs.Encode(oid, pgtype.BinaryFormatCode, ints, nil)
		}
	} else {
		var texts []*string
		if err = arrayCodecs.Scan(oid, pgtype.TextFormatCode, []byte(text), &texts); err == nil {
			buf, err = arrayCodecs.Encode(oid, pgtype.BinaryFormatCode, texts, nil)
		}
	}
	if err != nil {
		// The catalog rendered the text form itself; an empty array is the
		// safe answer should it ever not parse.
		buf, _ = arrayCodecs.Encode(oid, pgtype.BinaryFormatCode, []string{}, nil)
	}
	return buf
}

// Package pgtypes names PostgreSQL's built-in data types by their OIDs, the
// numbers a client uses to declare a parameter's type in the extended
// protocol's Parse message and that a ParameterDescription answers with. It
// is a leaf, like pgerror and pglex: the wire reads the OIDs, the planner
// decides what a parameter of each type compares as, and both name a type
// as PostgreSQL's messages do.
package pgtypes

import "strconv"

// OID is a PostgreSQL type OID.
type OID uint32

// The built-in types a client may declare, as PostgreSQL 15 numbers them.
const (
	Unspecified OID = 0 // the server infers the type, as for Unknown
	Bool        OID = 16
	Bytea       OID = 17
	Char        OID = 18 // "char": one byte
	Name        OID = 19 // an identifier: at most 63 bytes
	Int8        OID = 20
	Int2        OID = 21
	Int4        OID = 23
	Regproc     OID = 24
	Text        OID = 25
	Oid         OID = 26
	Tid         OID = 27
	Xid         OID = 28
	Cid         OID = 29
	JSON        OID = 114
	XML         OID = 142
	PgNodeTree  OID = 194
	Point       OID = 600
	Cidr        OID = 650
	Float4      OID = 700
	Float8      OID = 701
	Unknown     OID = 705
	Money       OID = 790
	Macaddr     OID = 829
	Inet        OID = 869
	BPChar      OID = 1042 // character(n): blank-padded
	Varchar     OID = 1043
	Date        OID = 1082
	Time        OID = 1083
	Timestamp   OID = 1114
	TimestampTZ OID = 1184
	Interval    OID = 1186
	TimeTZ      OID = 1266
	Bit         OID = 1560
	Varbit      OID = 1562
	Numeric     OID = 1700
	Cstring     OID = 2275
	Any         OID = 2276
	Record      OID = 2249
	Void        OID = 2278
	UUID        OID = 2950
	JSONB       OID = 3802
	Jsonpath    OID = 4072
)

// names are the types as PostgreSQL's messages name them (format_type).
var names = map[OID]string{
	Bool: "boolean", Bytea: "bytea", Char: `"char"`, Name: "name", Int8: "bigint", Int2: "smallint",
	Int4: "integer", Regproc: "regproc", Text: "text", Oid: "oid", Tid: "tid", Xid: "xid", Cid: "cid",
	JSON: "json", XML: "xml", PgNodeTree: "pg_node_tree", Point: "point", Cidr: "cidr", Float4: "real",
	Float8: "double precision", Unknown: "unknown", Money: "money", Macaddr: "macaddr", Inet: "inet",
	BPChar: "character", Varchar: "character varying", Date: "date", Time: "time without time zone",
	Timestamp: "timestamp without time zone", TimestampTZ: "timestamp with time zone",
	Interval: "interval", TimeTZ: "time with time zone", Bit: "bit", Varbit: "bit varying",
	Numeric: "numeric", Cstring: "cstring", Any: `"any"`, Record: "record", Void: "void", UUID: "uuid",
	JSONB: "jsonb", Jsonpath: "jsonpath",
	2202: "regprocedure", 2203: "regoper", 2204: "regoperator", 2205: "regclass", 2206: "regtype",
	3734: "regconfig", 3769: "regdictionary", 4089: "regnamespace", 4096: "regrole", 4191: "regcollation",
	3361: "pg_ndistinct", 3402: "pg_dependencies", 5017: "pg_mcv_list",
	// The arrays of the types above that drivers send.
	1000: "boolean[]", 1001: "bytea[]", 1002: `"char"[]`, 1003: "name[]", 1005: "smallint[]",
	1007: "integer[]", 1009: "text[]", 1014: "character[]", 1015: "character varying[]",
	1016: "bigint[]", 1021: "real[]", 1022: "double precision[]", 1028: "oid[]", 1115: "timestamp without time zone[]",
	1182: "date[]", 1185: "timestamp with time zone[]", 1231: "numeric[]", 199: "json[]",
	2951: "uuid[]", 3807: "jsonb[]",
}

// Name is the type as PostgreSQL's messages name it; a type countwall does
// not know by name is "the type with OID n".
func (o OID) Name() string {
	if n, ok := names[o]; ok {
		return n
	}
	return "the type with OID " + strconv.FormatUint(uint64(o), 10)
}

// Inferred reports whether the server chooses the type: a parameter
// declared unknown is typed from its use, as one left unspecified is.
func (o OID) Inferred() bool { return o == Unspecified || o == Unknown }

// IsOIDAlias reports whether the type is oid or one of its reg* aliases
// (regclass, regtype, ...). Against a bigint PostgreSQL converts the
// column's value to oid, which fails for a value outside 0..4294967295:
// whether it answers depends on the rows.
func (o OID) IsOIDAlias() bool {
	switch o {
	case Oid, Regproc, 2202, 2203, 2204, 2205, 2206, 3734, 3769, 4089, 4096, 4191:
		return true
	}
	return false
}

// IsInputless reports whether the type is one of the statistics and plan
// types that convert to text but whose input function refuses every value
// ("cannot accept a value of type pg_node_tree").
func (o OID) IsInputless() bool {
	switch o {
	case PgNodeTree, 3361, 3402, 5017:
		return true
	}
	return false
}

// arrays are the array types of the element types a count compares, as
// PostgreSQL 15 numbers them (typarray).
var arrays = map[OID]OID{Bool: 1000, Char: 1002, Name: 1003, Int2: 1005, Int4: 1007, Text: 1009,
	BPChar: 1014, Varchar: 1015, Int8: 1016, Float4: 1021, Float8: 1022, Numeric: 1231}

// elements are arrays read the other way.
var elements = func() map[OID]OID {
	m := make(map[OID]OID, len(arrays))
	for e, a := range arrays {
		m[a] = e
	}
	return m
}()

// ArrayOf is the type of an array of t; false for a type whose array
// countwall does not read.
func ArrayOf(t OID) (OID, bool) {
	a, ok := arrays[t]
	return a, ok
}

// Element is the element type of array type t; false when t is not an
// array type countwall reads.
func Element(t OID) (OID, bool) {
	e, ok := elements[t]
	return e, ok
}

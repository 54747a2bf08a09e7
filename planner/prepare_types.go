package planner

import (
	"strings"

	"countwall/pgerror"
	"countwall/pglex"
	"countwall/pgtypes"
)

// The parameter types PREPARE name (type, ...) AS query declares: each
// decides its parameter's type as a Parse message's declared OID does, so
// that EXECUTE's arguments are read by their type's input function
// (EXECUTE q('thirty') for an integer is 22P02, as in PostgreSQL).

// typesByName are the names PostgreSQL's grammar and catalog give the
// built-in types a statement compares with a column, typmods left out.
var typesByName = map[string]pgtypes.OID{
	"bool": pgtypes.Bool, "boolean": pgtypes.Bool, "bytea": pgtypes.Bytea, "name": pgtypes.Name,
	"smallint": pgtypes.Int2, "int2": pgtypes.Int2, "int": pgtypes.Int4, "integer": pgtypes.Int4, "int4": pgtypes.Int4,
	"bigint": pgtypes.Int8, "int8": pgtypes.Int8, "real": pgtypes.Float4, "float4": pgtypes.Float4,
	"double precision": pgtypes.Float8, "float8": pgtypes.Float8, "float": pgtypes.Float8,
	"numeric": pgtypes.Numeric, "decimal": pgtypes.Numeric, "dec": pgtypes.Numeric,
	"text": pgtypes.Text, "varchar": pgtypes.Varchar, "character varying": pgtypes.Varchar, "char varying": pgtypes.Varchar,
	"char": pgtypes.BPChar, "character": pgtypes.BPChar, "bpchar": pgtypes.BPChar,
	"date": pgtypes.Date, "timestamp": pgtypes.Timestamp, "timestamp without time zone": pgtypes.Timestamp,
	"timestamptz": pgtypes.TimestampTZ, "timestamp with time zone": pgtypes.TimestampTZ, "interval": pgtypes.Interval,
	"uuid": pgtypes.UUID, "json": pgtypes.JSON, "jsonb": pgtypes.JSONB, "oid": pgtypes.Oid, "unknown": pgtypes.Unknown,
}

// arrayOf is the array type of each element type above that drivers bind.
var arrayOf = map[pgtypes.OID]pgtypes.OID{
	pgtypes.Bool: 1000, pgtypes.Int2: 1005, pgtypes.Int4: 1007, pgtypes.Text: 1009, pgtypes.BPChar: 1014,
	pgtypes.Varchar: 1015, pgtypes.Int8: 1016, pgtypes.Float4: 1021, pgtypes.Float8: 1022, pgtypes.Numeric: 1231,
}

// declaredParamTypes reads PREPARE's list of types, toks[open] being its
// opening parenthesis; next is the index after the closing one.
func declaredParamTypes(toks []pglex.Token, open int) (types []pgtypes.OID, next int, err error) {
	end := matchingParen(toks, open)
	if end < 0 || end == open+1 {
		return nil, 0, pgerror.Errorf(pgerror.SyntaxError, "PREPARE's parameter types need a closing parenthesis: PREPARE name (integer, text) AS SELECT ...")
	}
	start, depth := open+1, 0
	for i := open + 1; i <= end; i++ {
		switch {
		case isOp(toks[i], "("):
			depth++
		case isOp(toks[i], ")") && i < end:
			depth--
		case depth == 0 && (isOp(toks[i], ",") || i == end):
			t, err := typeNamed(toks[start:i])
			if err != nil {
				return nil, 0, err
			}
			types = append(types, t)
			start = i + 1
		}
	}
	return types, end + 1, nil
}

// typeNamed reads one type: words, an optional typmod in parentheses (which
// a comparison does not use) and [] for its array.
func typeNamed(toks []pglex.Token) (pgtypes.OID, error) {
	var words []string
	array := false
	for i := 0; i < len(toks); i++ {
		switch t := toks[i]; {
		case t.Kind == pglex.Word && !array:
			words = append(words, t.Text)
		case isOp(t, "(") && !array:
			if i = matchingParen(toks, i); i < 0 {
				return 0, pgerror.Errorf(pgerror.SyntaxError, "a parameter type's modifier needs a closing parenthesis")
			}
		case isOp(t, "[") && i+1 < len(toks) && isOp(toks[i+1], "]"):
			array, i = true, i+1
		default:
			return 0, pgerror.Errorf(pgerror.SyntaxError, "syntax error at or near %s", pglex.Near(t)).
				WithHint("PREPARE's parameter types are type names: PREPARE name (integer, text) AS SELECT ...")
		}
	}
	name := strings.Join(words, " ")
	oid, ok := typesByName[name]
	if !ok {
		return 0, pgerror.Errorf(pgerror.UndefinedObject, "type %q does not exist", name)
	}
	if array {
		if oid, ok = arrayOf[oid]; !ok {
			return 0, pgerror.Errorf(pgerror.FeatureNotSupported, "a parameter of type %s[] is not supported: declare one of its elements' type instead", name)
		}
	}
	return oid, nil
}

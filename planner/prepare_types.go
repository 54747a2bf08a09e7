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

// typeNamed reads one type, all of toks: a typmod (which a comparison
// does not use) is dropped, and [] names its array.
func typeNamed(toks []pglex.Token) (pgtypes.OID, error) {
	name, n, err := readType(toks)
	if err != nil {
		return 0, err
	}
	if n < len(toks) {
		return 0, pgerror.Errorf(pgerror.SyntaxError, "syntax error at or near %s", pglex.Near(toks[n])).
			WithHint("PREPARE's parameter types are type names: PREPARE name (integer, text) AS SELECT ...")
	}
	base, array := strings.CutSuffix(name, "[]")
	base, _, _ = strings.Cut(base, "(")
	oid, ok := typesByName[base]
	if !ok {
		return 0, pgerror.Errorf(pgerror.UndefinedObject, "type %q does not exist", base)
	}
	if array {
		if oid, ok = pgtypes.ArrayOf(oid); !ok {
			return 0, pgerror.Errorf(pgerror.FeatureNotSupported, "a parameter of type %s[] is not supported: declare one of its elements' type instead", base)
		}
	}
	return oid, nil
}

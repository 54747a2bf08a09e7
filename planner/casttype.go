package planner

import (
	"strconv"
	"strings"

	"countwall/pgerror"
	"countwall/pglex"
	"countwall/pgtypes"
)

// typeWords are the type names PostgreSQL's grammar and pg_type give the
// built-in types a statement compares with a column, by their canonical
// name (typname). Casts and PREPARE's parameter types both read them.
var typeWords = map[string]string{
	"int": "int4", "integer": "int4", "int4": "int4", "bigint": "int8", "int8": "int8",
	"smallint": "int2", "int2": "int2", "text": "text", "varchar": "varchar",
	"char": "bpchar", "character": "bpchar", "bpchar": "bpchar", "numeric": "numeric",
	"decimal": "numeric", "dec": "numeric", "real": "float4", "float4": "float4", "float8": "float8",
	"float": "float8", "name": "name", "boolean": "bool", "bool": "bool", "bytea": "bytea",
	"date": "date", "time": "time", "timetz": "timetz", "timestamp": "timestamp",
	"timestamptz": "timestamptz", "interval": "interval", "uuid": "uuid", "json": "json",
	"jsonb": "jsonb", "oid": "oid", "unknown": "unknown",
}

// typesByName are the canonical names read back as types.
var typesByName = map[string]pgtypes.OID{
	"int2": pgtypes.Int2, "int4": pgtypes.Int4, "int8": pgtypes.Int8, "text": pgtypes.Text,
	"varchar": pgtypes.Varchar, "bpchar": pgtypes.BPChar, "numeric": pgtypes.Numeric,
	"float4": pgtypes.Float4, "float8": pgtypes.Float8, "name": pgtypes.Name, `"char"`: pgtypes.Char,
	"bool": pgtypes.Bool, "bytea": pgtypes.Bytea, "date": pgtypes.Date, "time": pgtypes.Time,
	"timetz": pgtypes.TimeTZ, "timestamp": pgtypes.Timestamp, "timestamptz": pgtypes.TimestampTZ,
	"interval": pgtypes.Interval, "uuid": pgtypes.UUID, "json": pgtypes.JSON, "jsonb": pgtypes.JSONB,
	"oid": pgtypes.Oid, "unknown": pgtypes.Unknown,
}

// castable are the types a cast may produce: the ones countwall compares.
var castable = map[pgtypes.OID]bool{
	pgtypes.Int2: true, pgtypes.Int4: true, pgtypes.Int8: true, pgtypes.Text: true,
	pgtypes.Varchar: true, pgtypes.BPChar: true, pgtypes.Numeric: true, pgtypes.Float4: true,
	pgtypes.Float8: true, pgtypes.Name: true, pgtypes.Char: true,
}

// readType reads a type name at the start of toks: its canonical name, with
// a length (varchar(10)) and [] for an array, and how many tokens it took.
func readType(toks []pglex.Token) (string, int, error) {
	i := 0
	if len(toks) > 2 && toks[0].Kind == pglex.Word && toks[0].Text == "pg_catalog" && isOp(toks[1], ".") {
		i = 2
	}
	if i >= len(toks) || (toks[i].Kind != pglex.Word && toks[i].Kind != pglex.QuotedIdent) {
		return "", 0, pgerror.Errorf(pgerror.SyntaxError, "a cast needs a type name")
	}
	name := toks[i].Text
	if toks[i].Kind == pglex.QuotedIdent && name == "char" {
		name = `"char"` // the one-byte type, not character
	} else if canon, ok := typeWords[name]; ok {
		name = canon
	}
	i++
	name, i = typeSecondWord(toks, name, i)
	mods, i, err := typeModifiers(toks, i)
	if err != nil {
		return "", 0, err
	}
	if name == "float8" && len(mods) == 1 {
		// float(p): real up to 24 bits of precision, double beyond.
		p, _ := strconv.Atoi(mods[0])
		name, mods = pick(p <= 24, "float4", "float8"), nil
	}
	if len(mods) > 0 {
		name += "(" + strings.Join(mods, ",") + ")"
	}
	if i+1 < len(toks) && isOp(toks[i], "[") {
		end, err := closing(toks, i)
		if err != nil {
			return "", 0, err
		}
		name, i = name+"[]", end+1
	}
	return name, i, nil
}

// typeSecondWord reads the second word of double precision, character
// varying and the time types' WITH|WITHOUT TIME ZONE.
func typeSecondWord(toks []pglex.Token, name string, i int) (string, int) {
	next := func(w string) bool {
		if i < len(toks) && toks[i].Kind == pglex.Word && toks[i].Text == w {
			i++
			return true
		}
		return false
	}
	switch name {
	case "double":
		if next("precision") {
			return "float8", i
		}
	case "bpchar":
		if next("varying") {
			return "varchar", i
		}
	case "time", "timestamp":
		// WITHOUT TIME ZONE is the type itself; WITH TIME ZONE its tz twin.
		start := i
		if next("without") && next("time") && next("zone") {
			return name, i
		}
		i = start
		if next("with") && next("time") && next("zone") {
			return name + "tz", i
		}
		i = start
	}
	return name, i
}

// typeModifiers reads (n) or (p, s) after a type name.
func typeModifiers(toks []pglex.Token, i int) ([]string, int, error) {
	if i >= len(toks) || !isOp(toks[i], "(") {
		return nil, i, nil
	}
	end, err := closing(toks, i)
	if err != nil {
		return nil, 0, err
	}
	var mods []string
	for j := i + 1; j < end; j++ {
		t := toks[j]
		switch {
		case t.Kind == pglex.Number && allDigits(t.Text) && (j == i+1 || isOp(toks[j-1], ",")):
			mods = append(mods, t.Text)
		case isOp(t, ",") && j > i+1 && j < end-1:
		default:
			return nil, 0, pgerror.Errorf(pgerror.SyntaxError, "a type's modifiers are numbers: varchar(10), numeric(10, 2)")
		}
	}
	return mods, end + 1, nil
}

// castType is a cast's type read back from its canonical name: the type,
// and for varchar(n) and character(n) the length n the cast cuts a value
// to (character without a length is character(1)); 0 for none.
func castType(name string) (pgtypes.OID, int, error) {
	base, mod, hasMod := strings.Cut(strings.TrimSuffix(name, ")"), "(")
	t, ok := typesByName[base]
	if !ok || !castable[t] || strings.HasSuffix(name, "[]") || (hasMod && t != pgtypes.Varchar && t != pgtypes.BPChar) {
		return 0, 0, errCastType(name)
	}
	if !hasMod {
		if t == pgtypes.BPChar {
			return t, 1, nil
		}
		return t, 0, nil
	}
	n, err := strconv.Atoi(mod)
	if err != nil || n < 1 {
		return 0, 0, pgerror.Errorf(pgerror.InvalidParameterValue, "length for type %s must be at least 1", base)
	}
	return t, n, nil
}

func errCastType(name string) error {
	return pgerror.Errorf(pgerror.FeatureNotSupported, "a cast to %s is not supported", name).
		WithHint("countwall casts constants and parameters to integer, bigint, smallint, numeric, real, double precision, text, varchar(n) and char(n)")
}

package sqlgen

import (
	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
	"strconv"
	"strings"
)

// PgKind is how a PostgreSQL column is referred to so that it behaves as the
// same data does in SQLite.
type PgKind int

const (
	pgNumber  PgKind = iota // integer and floating-point types: as they are
	pgNumeric               // numeric: read as double precision, SQLite's REAL
	pgText                  // text, varchar, char: compared bytewise
	pgOther                 // dates, booleans, uuids...: compared as their text
)

// PgKindOf classifies information_schema's data_type, and gives the
// ColumnType the catalog declares for it.
func PgKindOf(dataType string) (PgKind, ir.ColumnType) {
	switch strings.ToLower(dataType) {
	case "smallint", "integer", "bigint":
		return pgNumber, ir.TypeInt
	case "real", "double precision":
		return pgNumber, ir.TypeReal
	case "numeric":
		return pgNumeric, ir.TypeReal
	case "text", "character varying", "character":
		return pgText, ir.TypeText
	default:
		return pgOther, ir.TypeText
	}
}

// PostgresDialect renders the IR for PostgreSQL: $n parameters cast to the
// literal's type (so that an integer column compared with a real literal is
// compared as a real, as SQLite does), text compared under the "C" collation
// (bytewise, as SQLite's BINARY), and the arithmetic and functions whose
// meaning differs from SQLite's made to agree or refused.
type PostgresDialect struct {
	Kinds map[string]PgKind // by catalog column name
}

func (d PostgresDialect) column(col *ir.Column) string {
	name := pglex.QuoteIdentAlways(col.Name)
	switch d.Kinds[col.Name] {
	case pgNumeric:
		return "(" + name + ")::float8"
	case pgText:
		return name + ` COLLATE "C"`
	case pgOther:
		return "(" + name + `)::text COLLATE "C"`
	}
	return name
}

// number: an integer column as bigint (a smallint or integer column would
// otherwise compute, and overflow, in its own width) and a real one as
// double precision (numeric and real alike).
func (PostgresDialect) number(col *ir.Column) string {
	if col.Type == ir.TypeInt {
		return "(" + pglex.QuoteIdentAlways(col.Name) + ")::int8"
	}
	return "(" + pglex.QuoteIdentAlways(col.Name) + ")::float8"
}

func (PostgresDialect) placeholder(n int, l ir.Literal) string {
	p := "$" + strconv.Itoa(n)
	switch l.Kind {
	case ir.LitInt:
		return p + "::int8"
	case ir.LitFloat:
		return p + "::float8"
	}
	return p + "::text"
}

// function: round, floor and ceil take a double precision, as PostgreSQL
// resolves them for an integer argument too; length and the case functions
// read a value's text.
func (PostgresDialect) function(name string, args []string) (string, error) {
	switch name {
	case "abs":
		return "abs(" + args[0] + ")", nil
	case "round", "floor", "ceil":
		return name + "((" + args[0] + ")::float8)", nil
	case "length":
		return "length((" + args[0] + ")::text)", nil
	case "lower", "upper":
		// The "C" collation maps ASCII letters only, as SQLite does.
		return name + "((" + args[0] + `)::text COLLATE "C")`, nil
	}
	return "", pgerror.Errorf(pgerror.FeatureNotSupported, "function %s is not supported on a PostgreSQL store", name)
}

// arith: SQLite answers NULL for a division by zero where PostgreSQL fails,
// and its % works on integers only.
func (PostgresDialect) arith(op, left, right string, real bool) (string, error) {
	switch op {
	case "/":
		return "(" + left + " / NULLIF(" + right + ", 0))", nil
	case "%":
		if real {
			return "", pgerror.Errorf(pgerror.FeatureNotSupported, "%% on a real value is not supported on a PostgreSQL store")
		}
		return "(" + left + " % NULLIF(" + right + ", 0))", nil
	}
	return "(" + left + " " + op + " " + right + ")", nil
}

// HashableUnit reports whether PostgreSQL's text of t's unit values is the
// canonical text RecordKey hashes: integers in decimal and text as it is
// (a real's text may differ from Go's shortest form).
func (d PostgresDialect) HashableUnit(t *ir.Table) bool {
	col, ok := t.Columns[strings.ToLower(t.PrivacyUnit)]
	if !ok {
		return false
	}
	switch d.Kinds[col.Name] {
	case pgNumber:
		return col.Type == ir.TypeInt
	case pgText:
		return true
	}
	return false
}

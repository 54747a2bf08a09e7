package release

import (
	"strings"

	"countwall/pglex"
)

// Query is an answered COUNT query as the planner validated it, written
// into its audit row when it is answered: the risk solvers and the monitor
// read it, so that no reader of the audit parses SQL text again. The
// statement's text (Shape and Constants) stays for display and for
// telling repeated statements apart.
type Query struct {
	Table    string   `json:"table"`
	GroupBy  []string `json:"group_by,omitempty"`
	Distinct bool     `json:"distinct,omitempty"` // COUNT(DISTINCT the privacy unit)
	// AtLeast is set for the threshold forms COUNT(*) > b and
	// COUNT(*) >= b: the answer 1 says the count is at least *AtLeast.
	AtLeast *int64 `json:"at_least,omitempty"`
	// Where is the WHERE clause split at its top-level ANDs, in the order
	// written; empty for every row.
	Where []Conjunct `json:"where,omitempty"`
	// Bounds are the contribution bounds the answer was computed under,
	// when the mechanism bounds what one unit contributes.
	Bounds *Bounds `json:"bounds,omitempty"`
	// Aggregates are the select list's aggregates when it has a SUM or an
	// AVG, in the order written (nil for a COUNT query).
	Aggregates []Aggregate `json:"aggregates,omitempty"`
}

// Aggregate is one aggregate of a query with SUM or AVG.
type Aggregate struct {
	Func   string `json:"func"`             // count, sum or avg
	Column string `json:"column,omitempty"` // summed or averaged
	Alias  string `json:"alias"`
}

// Bounds are per-unit contribution bounds: rows a cell may count of one
// unit, and cells one unit may reach.
type Bounds struct {
	MaxRowsPerUnit   int64 `json:"max_rows_per_unit"`
	MaxGroupsPerUnit int64 `json:"max_groups_per_unit"`
}

// Op is what a conjunct tests.
type Op string

// The conjuncts' tests. A NOT around a comparison is folded into its
// opposite (NOT (age < 30) is age >= 30, NULL included, as SQL's
// three-valued logic makes it); what cannot be folded keeps its NOT.
const (
	OpEq         Op = "="
	OpNe         Op = "<>"
	OpLt         Op = "<"
	OpLe         Op = "<="
	OpGt         Op = ">"
	OpGe         Op = ">="
	OpBetween    Op = "between"     // Values: low, high
	OpNotBetween Op = "not between" // Values: low, high
	OpIn         Op = "in"          // Values: the list, as written
	OpNotIn      Op = "not in"
	OpIsNull     Op = "is null"
	OpIsNotNull  Op = "is not null"
	OpLike       Op = "like" // Values: the pattern
	OpNotLike    Op = "not like"
	OpAnd        Op = "and"  // Inner: the conjuncts (only inside OpOr or OpNot)
	OpOr         Op = "or"   // Inner: the alternatives
	OpNot        Op = "not"  // Inner: the conjuncts of the negated conjunction
	OpExpr       Op = "expr" // arithmetic over a column compared to Values[0] by Compare
)

// String is the operator as SQL spells it.
func (o Op) String() string { return string(o) }

// Conjunct is one condition of a WHERE clause.
type Conjunct struct {
	// Column is the column tested, as the catalog names it; "" for
	// OpAnd, OpOr, OpNot and OpExpr.
	Column string     `json:"column,omitempty"`
	Op     Op         `json:"op"`
	Values []Constant `json:"values,omitempty"`
	Inner  []Conjunct `json:"inner,omitempty"`
	// Compare is OpExpr's comparison (one of = <> < <= > >=), and Expr
	// its arithmetic as the planner rendered it from the validated tree.
	Compare Op     `json:"compare,omitempty"`
	Expr    string `json:"expr,omitempty"`
	// Text is the condition as SQL, the way the owner reads it: keywords
	// in lower case, names quoted where PostgreSQL needs it, constants
	// as literals. Equal conditions have equal text, so it keys a cell.
	Text string `json:"text"`
}

// Compare is the conjunct `column op value` (OpEq to OpGe, OpLike,
// OpNotLike).
func Compare(column string, op Op, v Constant) Conjunct {
	return Conjunct{Column: column, Op: op, Values: []Constant{v}, Text: quoteName(column) + " " + string(op) + " " + v.SQL()}
}

// Between is `column [not] between lo and hi`.
func Between(column string, negate bool, lo, hi Constant) Conjunct {
	op := OpBetween
	if negate {
		op = OpNotBetween
	}
	return Conjunct{Column: column, Op: op, Values: []Constant{lo, hi},
		Text: quoteName(column) + " " + string(op) + " " + lo.SQL() + " and " + hi.SQL()}
}

// In is `column [not] in (values)`.
func In(column string, negate bool, values []Constant) Conjunct {
	op := OpIn
	if negate {
		op = OpNotIn
	}
	var b strings.Builder
	b.WriteString(quoteName(column) + " " + string(op) + " (")
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.SQL())
	}
	b.WriteByte(')')
	return Conjunct{Column: column, Op: op, Values: values, Text: b.String()}
}

// IsNull is `column is [not] null`.
func IsNull(column string, negate bool) Conjunct {
	op := OpIsNull
	if negate {
		op = OpIsNotNull
	}
	return Conjunct{Column: column, Op: op, Text: quoteName(column) + " " + string(op)}
}

// And is a conjunction nested in an OR or a NOT.
func And(inner []Conjunct) Conjunct {
	return Conjunct{Op: OpAnd, Inner: inner, Text: joinTexts(inner, " and ", OpOr)}
}

// Or is a disjunction; an alternative that is itself a conjunction is
// parenthesised.
func Or(alternatives []Conjunct) Conjunct {
	return Conjunct{Op: OpOr, Inner: alternatives, Text: joinTexts(alternatives, " or ", OpAnd)}
}

// Not is `not (inner...)`, the negation of a conjunction; a lone OR needs
// no parentheses of its own inside the NOT's.
func Not(inner []Conjunct) Conjunct {
	wrap := OpOr
	if len(inner) == 1 {
		wrap = ""
	}
	return Conjunct{Op: OpNot, Inner: inner, Text: "not (" + joinTexts(inner, " and ", wrap) + ")"}
}

// Expr is `expr compare value` for an arithmetic expression over column,
// exprText as the planner rendered it.
func Expr(column, exprText string, compare Op, v Constant) Conjunct {
	return Conjunct{Column: column, Op: OpExpr, Compare: compare, Expr: exprText, Values: []Constant{v},
		Text: exprText + " " + string(compare) + " " + v.SQL()}
}

// joinTexts joins conditions with sep, parenthesising those whose own
// operator is wrap (an OR inside an AND, an AND inside an OR).
func joinTexts(cs []Conjunct, sep string, wrap Op) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString(sep)
		}
		if c.Op == wrap {
			b.WriteString("(" + c.Text + ")")
		} else {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// quoteName is a column name as PostgreSQL reads it.
func quoteName(name string) string { return pglex.QuoteIdent(name) }

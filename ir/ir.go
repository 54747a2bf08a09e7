// Package ir is countwall's vocabulary: the validated query representation
// (statements, predicates, literals), the catalog and its public domains and
// policies, what a mechanism needs computed (Needs) and what a backend hands
// back (Cell, Result), and the contribution bounds. It is a leaf: the parser,
// the backends, the mechanisms and the config all speak it, and it imports
// none of them.
package ir

// Statement is one analyst statement: a *Query, a *Set, a *Show or a
// *Chatter (harmless client talk answered without touching the data).
type Statement interface{ statement() }

// Set is `SET name = value` / `SET name TO value`.
type Set struct {
	Name  string // lower-cased
	Value string // as typed, quotes removed
	// Reset is RESET name (RESET ALL: Name "all"): the setting returns to
	// its default.
	Reset bool
	// Local is SET LOCAL: the setting lasts until the transaction ends.
	Local bool
}

// Show is `SHOW name`.
type Show struct {
	Name string // lower-cased
}

// Chatter is client noise that drivers send on connect (SELECT version(),
// SET application_name, BEGIN/COMMIT, ...). Kind names what was asked.
type Chatter struct {
	Kind  ChatterKind
	Value string // for current_setting: the setting name
	// Rows is how many rows a FETCH or MOVE asks for (-1: ALL).
	Rows int64
}

// ChatterKind names a kind of client chatter.
type ChatterKind string

// The kinds of chatter. Begin, Commit and Rollback are transaction control:
// countwall never writes, but the front door keeps a block's state as
// PostgreSQL does.
const (
	ChatterVersion        ChatterKind = "version"
	ChatterCurrentSetting ChatterKind = "current_setting"
	ChatterBegin          ChatterKind = "begin"
	ChatterCommit         ChatterKind = "commit"
	ChatterRollback       ChatterKind = "rollback"
	ChatterDiscard        ChatterKind = "discard"
	ChatterEmpty          ChatterKind = "empty"
	// ChatterDeallocate is DEALLOCATE [PREPARE] name | ALL, which drivers
	// send to drop a statement they prepared (psycopg 3 does it by itself):
	// Value is the name, "" for ALL. The front end holding the prepared
	// statements acts on it.
	ChatterDeallocate ChatterKind = "deallocate"
	// ChatterSavepoint, ChatterRelease and ChatterRollbackTo are SAVEPOINT
	// name, RELEASE [SAVEPOINT] name and ROLLBACK [WORK | TRANSACTION] TO
	// [SAVEPOINT] name, which drivers send inside a block (psycopg 3's type
	// introspection): countwall never writes, so they only keep the block's
	// state. Value is the savepoint's name.
	ChatterSavepoint  ChatterKind = "savepoint"
	ChatterRelease    ChatterKind = "release"
	ChatterRollbackTo ChatterKind = "rollback_to"
	// ChatterFetch, ChatterMove and ChatterClose are FETCH [FORWARD] [n |
	// ALL] [FROM | IN] name, MOVE likewise and CLOSE {name | ALL} on a
	// cursor DECLAREd in the session (psycopg2's named cursors, pandas'
	// chunked reads): the front end holding the cursors answers them from
	// the answer the DECLARE computed. Value is the cursor's name ("" for
	// CLOSE ALL).
	ChatterFetch ChatterKind = "fetch"
	ChatterMove  ChatterKind = "move"
	ChatterClose ChatterKind = "close"
	// ChatterExecute is EXECUTE name [(arguments)] of a statement the
	// session PREPAREd (or prepared with the protocol's Parse): the front
	// end runs that statement with the arguments. Value is its name.
	ChatterExecute ChatterKind = "execute"
)

func (*Set) statement()     {}
func (*Show) statement()    {}
func (*Chatter) statement() {}
func (*Query) statement()   {}

// AggKind is what the COUNT counts.
type AggKind int

const (
	CountRows     AggKind = iota // COUNT(*) or COUNT(1)
	CountDistinct                // COUNT(DISTINCT <privacy-unit column>)
)

// Threshold is the `COUNT(*) > b` / `COUNT(*) >= b` form, whose answer is 0 or 1.
// It is normalised to a strict comparison: Bound is b for `>` and b-1 for `>=`.
type Threshold struct {
	Bound int64 // the answer is 1 when count > Bound
}

// Query is a validated aggregate query over one table: a COUNT, or SUM and
// AVG beside it (Aggregates).
type Query struct {
	Table     string     // canonical table name from the catalog
	Agg       AggKind    // what is counted
	Threshold *Threshold // non-nil for threshold queries
	Alias     string     // output column name of the aggregate ("count" by default)
	GroupBy   []string   // canonical column names, in select-list order
	// GroupCasts is, for each GroupBy column, the canonical type the
	// select list casts it to ("text", "varchar", or the column's own
	// "int8" or "float8"), "" where it selects the column itself: the
	// answer's column has that type. Nil when no group column is cast.
	GroupCasts []string
	// GroupsAfterCount is how many of the GroupBy columns the select list
	// names after the count (SELECT COUNT(*), sex ...: 1); the answer's
	// columns follow the select list. 0: the count is last. A query with
	// sums places its columns by Aggregates' positions instead.
	GroupsAfterCount int
	OrderBy          []Order // on group columns only
	Where            Pred    // nil when there is no WHERE
	// Aggregates are set when the select list has a SUM or an AVG (see
	// HasSums); nil for a COUNT query, whose path is unchanged by them.
	Aggregates []Aggregate
}

// Order is one ORDER BY term.
type Order struct {
	Column string
	Desc   bool
}

// Pred is a node of a WHERE predicate.
type Pred interface{ pred() }

// And, Or and Not combine predicates.
type (
	And struct{ Left, Right Pred }
	Or  struct{ Left, Right Pred }
	Not struct{ Inner Pred }
)

// Compare is `column op literal`. Op is one of = <> < <= > >=.
type Compare struct {
	Column string
	Op     string
	Value  Literal
}

// Between is `column [NOT] BETWEEN lo AND hi`.
type Between struct {
	Column string
	Lo, Hi Literal
	Negate bool
}

// In is `column [NOT] IN (v1, v2, ...)`.
type In struct {
	Column string
	Values []Literal
	Negate bool
}

// IsNull is `column IS [NOT] NULL`.
type IsNull struct {
	Column string
	Negate bool
}

// Like is `column [NOT] LIKE 'pattern'`.
type Like struct {
	Column  string
	Pattern string
	Negate  bool
}

// MathCompare is `expr op literal` where expr is arithmetic over one column
// (allowed only where policy allows math). Expr is rendered by the planner from
// its own validated tree, never from analyst text.
type MathCompare struct {
	Expr  Expr
	Op    string
	Value Literal
	// Guard is the range of the expression's column over which the planner
	// checked Expr total (no overflow, no division by zero, for any value in
	// it); nil when the column is text, on which the allowed functions are
	// total. A row whose value lies outside it, or is not a number of the
	// column's type, evaluates Expr as NULL: a declared range is a promise
	// the data may break, and no row may reach an error the check did not
	// rule out.
	Guard *Between
}

// Expr is an arithmetic expression over columns and literals.
type Expr interface{ expr() }

// ColumnRef, NumberLit, BinaryExpr and FuncCall make up an Expr.
type (
	ColumnRef  struct{ Column string }
	NumberLit  struct{ Value Literal }
	BinaryExpr struct {
		Op          string // + - * / %
		Left, Right Expr
	}
	FuncCall struct {
		Name string // allow-listed, lower-case: abs, round, floor, ceil, length, lower, upper
		Args []Expr
	}
)

func (*And) pred()         {}
func (*Or) pred()          {}
func (*Not) pred()         {}
func (*Compare) pred()     {}
func (*Between) pred()     {}
func (*In) pred()          {}
func (*IsNull) pred()      {}
func (*Like) pred()        {}
func (*MathCompare) pred() {}

func (*ColumnRef) expr()  {}
func (*NumberLit) expr()  {}
func (*BinaryExpr) expr() {}
func (*FuncCall) expr()   {}

// LitKind is the type of a literal.
type LitKind int

const (
	LitInt LitKind = iota
	LitFloat
	LitText
)

// Literal is a typed constant from the analyst's query (or a bound parameter).
// It is always sent to SQLite as a bound parameter.
type Literal struct {
	Kind  LitKind
	Int   int64
	Float float64
	Text  string
}

// Value returns the literal as a database/sql argument.
func (l Literal) Value() any {
	switch l.Kind {
	case LitInt:
		return l.Int
	case LitFloat:
		return l.Float
	default:
		return l.Text
	}
}

// ExprColumn is the column an arithmetic expression reads ("" for one of
// literals only). The planner allows one column per expression, so the
// first found is the one.
func ExprColumn(e Expr) string {
	switch e := e.(type) {
	case *ColumnRef:
		return e.Column
	case *BinaryExpr:
		if c := ExprColumn(e.Left); c != "" {
			return c
		}
		return ExprColumn(e.Right)
	case *FuncCall:
		for _, a := range e.Args {
			if c := ExprColumn(a); c != "" {
				return c
			}
		}
	}
	return ""
}

// CopyOut is how `COPY (query) TO STDOUT` writes the query's answer:
// PostgreSQL's text format (tab-separated, \N for NULL) or CSV, with a
// header line of the column names when asked.
type CopyOut struct {
	CSV    bool
	Header bool
}

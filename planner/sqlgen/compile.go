// Package sqlgen renders a validated query as SQL with bound parameters:
// SQLite's, and PostgreSQL's through a dialect that says where the two
// differ. Identifiers come only from the catalog; analyst text is never
// pasted into the SQL.
package sqlgen

import (
	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
	"countwall/planner/plan"
	"fmt"
	"strings"
)

// SQL aliases of the per-unit pass. Every column of the inner derived table is
// aliased by the compiler, so a protected column called n or k cannot collide.
const (
	unitAlias  = "cw_u"
	rowsAlias  = "cw_n"
	keyAlias   = "cw_k"
	groupAlias = "cw_g" // cw_g0, cw_g1, ...
)

// keyModulus is 2^32: contributor keys are sums of uint32 record keys mod 2^32.
const keyModulus = "4294967296"

// sqlFuncs is the allow-list of functions a MathCompare may call, with the
// SQLite function each one becomes and the argument counts it accepts.
// PostgreSQL's round(double precision) rounds half to even where SQLite's
// round rounds half away from zero, so round is countwall's own function;
// PostgreSQL's round, floor and ceil take a double precision (an integer
// argument is cast to it), so SQLite's are given one (sqliteFunction).
var sqlFuncs = map[string]struct {
	sqlite         string
	minArg, maxArg int
}{
	"abs":    {"abs", 1, 1},
	"round":  {plan.RoundHalfEvenFunc, 1, 1},
	"floor":  {"floor", 1, 1},
	"ceil":   {"ceil", 1, 1},
	"length": {"length", 1, 1},
	"lower":  {"lower", 1, 1},
	"upper":  {"upper", 1, 1},
}

// compareOps maps the IR's comparison operators to SQLite's.
var compareOps = map[string]string{
	"=": "=", "<>": "<>", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
}

// arithOps is the allow-list of arithmetic operators in a MathCompare.
var arithOps = map[string]bool{"+": true, "-": true, "*": true, "/": true, "%": true}

// Compile renders a validated query as SQLite SQL and its bound arguments.
// Identifiers come only from the catalog (t), double-quoted; every literal is
// a ? parameter. When needs.Key, the first argument is the place of the noise
// secret and is nil here; Run binds the secret there.
//
// Compile returns "" and nil when q names a column t does not know or calls a
// function or operator outside the allow-list: a validated query never does,
// and Run reports such a query as an error instead of running it.
func Compile(t *ir.Table, q *ir.Query, needs ir.Needs) (sql string, args []any) {
	sql, args, err := SQLite(t, q, needs, nil)
	if err != nil {
		return "", nil
	}
	return sql, args
}

// SQLite is Compile with the secret bound and the reason for a refusal kept.
func SQLite(t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (string, []any, error) {
	c := &compiler{t: t}
	table := pglex.QuoteIdentAlways(t.Name)
	groups := make([]string, len(q.GroupBy))
	for i, g := range q.GroupBy {
		groups[i] = c.group(g)
	}
	// The unit column is resolved only when the SQL uses it, so a table
	// without one still answers plain counts.
	var unit string
	if q.Agg == ir.CountDistinct || needs.Units || needs.Key {
		unit = c.column(t.PrivacyUnit)
	}

	// The WHERE clause is rendered into its own builder so that its arguments
	// can be placed after the secret's, in the order the ? marks appear.
	var where string
	var whereArgs []any
	if q.Where != nil {
		pred, args, err := wherePred(t, q.Where)
		if err != nil {
			return "", nil, err
		}
		where, whereArgs = " WHERE "+pred, args
	}
	if c.err != nil {
		return "", nil, c.err
	}

	if !needs.Key {
		return aggregateSQL(q, needs, table, unit, groups, where), whereArgs, nil
	}
	return perUnitKeySQL(q, table, unit, groups, where), append([]any{secret}, whereArgs...), nil
}

// wherePred renders a WHERE predicate with a compiler of its own, so that
// its arguments can be placed after others', in the order the ? marks
// appear.
func wherePred(t *ir.Table, p ir.Pred) (string, []any, error) {
	w := &compiler{t: t}
	w.pred(p)
	return w.sb.String(), w.args, w.err
}

// writeSelectPrefix starts a SELECT with cols, each followed by a comma,
// for the aggregates that come after them.
func writeSelectPrefix(sb *strings.Builder, cols []string) {
	sb.WriteString("SELECT ")
	for _, c := range cols {
		sb.WriteString(c)
		sb.WriteString(", ")
	}
}

// aggregateSQL is one aggregate over the matching rows. Units alone need no
// per-unit pass: COUNT(DISTINCT) skips NULL units just as the pass would,
// and measures about twice as fast on 200,000 rows.
func aggregateSQL(q *ir.Query, needs ir.Needs, table, unit string, groups []string, where string) string {
	var sb strings.Builder
	writeSelectPrefix(&sb, groups)
	if q.Agg == ir.CountDistinct {
		sb.WriteString("COUNT(DISTINCT " + unit + ")")
	} else {
		sb.WriteString("COUNT(*)")
	}
	if needs.Units {
		sb.WriteString(", COUNT(DISTINCT " + unit + ")")
	}
	sb.WriteString(" FROM " + table)
	sb.WriteString(where)
	writeGroupOrder(&sb, groups)
	return sb.String()
}

// perUnitKeySQL is the per-unit pass for contributor keys: the inner query
// has one row per (group, unit) with the unit's row count and record key, so
// each unit's key is summed once however many rows it has; the outer query
// sums per group. A NULL unit is no contributor: COUNT and SUM skip it, as
// COUNT(DISTINCT) does, while its rows still count for COUNT(*). Its one ?
// before the WHERE's is the secret.
func perUnitKeySQL(q *ir.Query, table, unit string, groups []string, where string) string {
	var sb strings.Builder
	inner := make([]string, len(groups))
	for i := range groups {
		inner[i] = fmt.Sprintf("%s%d", groupAlias, i)
	}
	writeSelectPrefix(&sb, inner)
	if q.Agg == ir.CountDistinct {
		sb.WriteString("COUNT(" + unitAlias + ")")
	} else {
		sb.WriteString("COALESCE(SUM(" + rowsAlias + "), 0)")
	}
	sb.WriteString(", COUNT(" + unitAlias + ")")
	sb.WriteString(", COALESCE(SUM(" + keyAlias + "), 0) % " + keyModulus)
	sb.WriteString(" FROM (SELECT ")
	for i, g := range groups {
		sb.WriteString(g + " AS " + inner[i] + ", ")
	}
	sb.WriteString(unit + " AS " + unitAlias + ", COUNT(*) AS " + rowsAlias)
	sb.WriteString(", " + plan.RecordKeyFunc + "(?, " + unit + ") AS " + keyAlias)
	sb.WriteString(" FROM " + table)
	sb.WriteString(where)
	sb.WriteString(" GROUP BY ")
	for _, g := range groups {
		sb.WriteString(g + ", ")
	}
	sb.WriteString(unit + ")")
	writeGroupOrder(&sb, inner)
	return sb.String()
}

// writeGroupOrder appends GROUP BY and a matching ORDER BY, which gives the
// cells a deterministic order at no cost (SQLite groups by sorting anyway).
func writeGroupOrder(sb *strings.Builder, groups []string) {
	if len(groups) == 0 {
		return
	}
	list := strings.Join(groups, ", ")
	sb.WriteString(" GROUP BY " + list + " ORDER BY " + list)
}

// TableSize is the SQL that counts a table's rows, in either dialect.
func TableSize(t *ir.Table) string { return "SELECT COUNT(*) FROM " + pglex.QuoteIdentAlways(t.Name) }

// compiler renders predicates and expressions, collecting bound arguments in
// the order their ? marks appear. The first problem found is kept in err.
type compiler struct {
	t    *ir.Table
	sb   strings.Builder
	args []any
	err  error
	// dialect renders what differs from SQLite; nil renders SQLite.
	dialect dialect
}

// dialect is the seam through which the same IR is rendered for another
// database: how a column is referred to, how a parameter is marked, and how a
// function call or operator differs from SQLite's meaning.
type dialect interface {
	// column is the reference to a catalog column.
	column(col *ir.Column) string
	// number is the reference to a numeric column inside arithmetic, of the
	// type the expression was checked for: bigint or double precision.
	number(col *ir.Column) string
	// placeholder marks the n-th (1-based) bound parameter of literal l.
	placeholder(n int, l ir.Literal) string
	// function renders a call of allow-listed function name over the
	// rendered arguments, or fails when its meaning would differ.
	function(name string, args []string) (string, error)
	// arith renders left op right, or fails when its meaning would differ.
	arith(op string, left, right string, real bool) (string, error)
}

func (c *compiler) fail(format string, a ...any) {
	if c.err == nil {
		c.err = pgerror.Errorf(pgerror.InternalError, format, a...)
	}
}

// column returns the quoted catalog name of a column the query refers to.
func (c *compiler) column(name string) string {
	col, ok := c.t.Columns[strings.ToLower(name)]
	if !ok {
		c.fail("column %q is not in the catalog of table %q", name, c.t.Name)
		return pglex.QuoteIdentAlways(name)
	}
	if c.dialect != nil {
		return c.dialect.column(col)
	}
	return pglex.QuoteIdentAlways(col.Name)
}

func (c *compiler) bind(l ir.Literal) {
	c.args = append(c.args, l.Value())
	if c.dialect != nil {
		c.sb.WriteString(c.dialect.placeholder(len(c.args), l))
		return
	}
	c.sb.WriteString("?")
}

func (c *compiler) pred(p ir.Pred) {
	switch p := p.(type) {
	case *ir.And:
		c.binary(p.Left, " AND ", p.Right)
	case *ir.Or:
		c.binary(p.Left, " OR ", p.Right)
	case *ir.Not:
		c.sb.WriteString("NOT ")
		c.sb.WriteString("(")
		c.pred(p.Inner)
		c.sb.WriteString(")")
	case *ir.Compare:
		c.sb.WriteString(c.column(p.Column))
		c.op(p.Op)
		c.bind(p.Value)
	case *ir.Between:
		c.sb.WriteString(c.column(p.Column))
		c.sb.WriteString(negated(p.Negate, " BETWEEN "))
		c.bind(p.Lo)
		c.sb.WriteString(" AND ")
		c.bind(p.Hi)
	case *ir.In:
		if len(p.Values) == 0 {
			c.fail("an IN list is empty")
			return
		}
		c.sb.WriteString(c.column(p.Column))
		c.sb.WriteString(negated(p.Negate, " IN "))
		c.sb.WriteString("(")
		for i, v := range p.Values {
			if i > 0 {
				c.sb.WriteString(", ")
			}
			c.bind(v)
		}
		c.sb.WriteString(")")
	case *ir.IsNull:
		c.sb.WriteString(c.column(p.Column))
		if p.Negate {
			c.sb.WriteString(" IS NOT NULL")
		} else {
			c.sb.WriteString(" IS NULL")
		}
	case *ir.Like:
		// PostgreSQL's LIKE escapes with a backslash by default; SQLite's has
		// no escape unless told. Case sensitivity comes from the store's
		// case_sensitive_like pragma.
		c.sb.WriteString(c.column(p.Column))
		c.sb.WriteString(negated(p.Negate, " LIKE "))
		c.bind(ir.Literal{Kind: ir.LitText, Text: p.Pattern})
		c.sb.WriteString(` ESCAPE '\'`)
	case *ir.MathCompare:
		c.mathCompare(p)
	case ir.Derived:
		c.pred(p.Lower())
	case nil:
		c.fail("a predicate is missing")
	default:
		c.fail("predicate %T is not supported", p)
	}
}

// mathCompare renders expr op value with the expression computed only for
// rows whose column lies in the range it was checked total over (the
// guard): any other row's expression is NULL, so no row reaches an error.
func (c *compiler) mathCompare(p *ir.MathCompare) {
	if col, ok := c.unguardedColumn(p.Expr, p.Guard); ok {
		c.fail("arithmetic on column %q has no checked range", col)
		return
	}
	if p.Guard == nil { // over a text column: total on every value
		c.expr(p.Expr)
	} else {
		c.sb.WriteString("CASE WHEN ")
		c.guard(p.Guard)
		c.sb.WriteString(" THEN ")
		c.expr(p.Expr)
		c.sb.WriteString(" END")
	}
	c.op(p.Op)
	c.bind(p.Value)
}

// unguardedColumn finds a numeric column of e that guard does not cover.
func (c *compiler) unguardedColumn(e ir.Expr, guard *ir.Between) (string, bool) {
	switch e := e.(type) {
	case *ir.ColumnRef:
		col, ok := c.t.Columns[strings.ToLower(e.Column)]
		if ok && col.Type != ir.TypeText && (guard == nil || !strings.EqualFold(guard.Column, e.Column)) {
			return e.Column, true
		}
	case *ir.BinaryExpr:
		if col, ok := c.unguardedColumn(e.Left, guard); ok {
			return col, true
		}
		return c.unguardedColumn(e.Right, guard)
	case *ir.FuncCall:
		for _, a := range e.Args {
			if col, ok := c.unguardedColumn(a, guard); ok {
				return col, true
			}
		}
	}
	return "", false
}

// guard renders the range condition. SQLite may store a text or a real in
// an integer column, which no bigint holds: such a value takes no part
// either (a text is also greater than every number, so BETWEEN alone
// leaves it out of a real column's range).
func (c *compiler) guard(g *ir.Between) {
	ref := c.column(g.Column)
	if col, ok := c.t.Columns[strings.ToLower(g.Column)]; ok && c.dialect == nil && col.Type == ir.TypeInt {
		c.sb.WriteString("typeof(" + ref + ") = 'integer' AND ")
	}
	c.sb.WriteString(ref + " BETWEEN ")
	c.bind(g.Lo)
	c.sb.WriteString(" AND ")
	c.bind(g.Hi)
}

func (c *compiler) binary(l ir.Pred, op string, r ir.Pred) {
	c.sb.WriteString("(")
	c.pred(l)
	c.sb.WriteString(op)
	c.pred(r)
	c.sb.WriteString(")")
}

func (c *compiler) op(op string) {
	sqlOp, ok := compareOps[op]
	if !ok {
		c.fail("comparison operator %q is not supported", op)
		return
	}
	c.sb.WriteString(" " + sqlOp + " ")
}

func negated(negate bool, keyword string) string {
	if negate {
		return " NOT" + keyword
	}
	return keyword
}

func (c *compiler) expr(e ir.Expr) {
	switch e := e.(type) {
	case *ir.ColumnRef:
		c.sb.WriteString(c.numberColumn(e.Column))
	case *ir.NumberLit:
		c.bind(e.Value)
	case *ir.BinaryExpr:
		if !arithOps[e.Op] {
			c.fail("arithmetic operator %q is not supported", e.Op)
			return
		}
		if c.dialect != nil {
			left, right := c.sub(e.Left), c.sub(e.Right)
			text, err := c.dialect.arith(e.Op, left, right, c.isReal(e.Left) || c.isReal(e.Right))
			if err != nil {
				c.refuse(err)
				return
			}
			c.sb.WriteString(text)
			return
		}
		c.sb.WriteString("(")
		c.expr(e.Left)
		c.sb.WriteString(" " + e.Op + " ")
		c.expr(e.Right)
		c.sb.WriteString(")")
	case *ir.FuncCall:
		f, ok := sqlFuncs[e.Name]
		if !ok {
			c.fail("function %q is not supported", e.Name)
			return
		}
		if len(e.Args) < f.minArg || len(e.Args) > f.maxArg {
			c.fail("function %s takes %d to %d arguments, got %d", e.Name, f.minArg, f.maxArg, len(e.Args))
			return
		}
		if c.dialect != nil {
			args := make([]string, len(e.Args))
			for i, a := range e.Args {
				args[i] = c.sub(a)
			}
			text, err := c.dialect.function(e.Name, args)
			if err != nil {
				c.refuse(err)
				return
			}
			c.sb.WriteString(text)
			return
		}
		c.sb.WriteString(f.sqlite + "(")
		if e.Name == "floor" || e.Name == "ceil" {
			// SQLite's keep an integer an integer; PostgreSQL's cast it
			// to double precision first (past 2^53 the two differ).
			c.sb.WriteString("CAST(")
			c.expr(e.Args[0])
			c.sb.WriteString(" AS REAL))")
			return
		}
		for i, a := range e.Args {
			if i > 0 {
				c.sb.WriteString(", ")
			}
			c.expr(a)
		}
		c.sb.WriteString(")")
	case nil:
		c.fail("an expression is missing")
	default:
		c.fail("expression %T is not supported", e)
	}
}

// numberColumn is a column as arithmetic reads it: a real column as a real
// in SQLite, whose NUMERIC affinity keeps whole numbers as integers (which
// would divide as integers); in PostgreSQL as the type it was checked for.
func (c *compiler) numberColumn(name string) string {
	ref := c.column(name)
	col, ok := c.t.Columns[strings.ToLower(name)]
	switch {
	case !ok || col.Type == ir.TypeText:
		return ref
	case c.dialect != nil:
		return c.dialect.number(col)
	case col.Type == ir.TypeReal:
		return "CAST(" + ref + " AS REAL)"
	}
	return ref
}

// sub renders an expression on its own, its parameters numbered after those
// already bound, and returns the text.
func (c *compiler) sub(e ir.Expr) string {
	outer := c.sb
	c.sb = strings.Builder{}
	c.expr(e)
	text := c.sb.String()
	c.sb = outer
	return text
}

// isReal reports whether an expression may yield a real: a real column or
// literal anywhere in it.
func (c *compiler) isReal(e ir.Expr) bool {
	switch e := e.(type) {
	case *ir.ColumnRef:
		col, ok := c.t.Columns[strings.ToLower(e.Column)]
		return ok && col.Type == ir.TypeReal
	case *ir.NumberLit:
		return e.Value.Kind == ir.LitFloat
	case *ir.BinaryExpr:
		return c.isReal(e.Left) || c.isReal(e.Right)
	case *ir.FuncCall:
		for _, a := range e.Args {
			if c.isReal(a) {
				return true
			}
		}
	}
	return false
}

// refuse keeps err, a refusal the analyst should see, as the first problem.
func (c *compiler) refuse(err error) {
	if c.err == nil {
		c.err = err
	}
}

// UnitKeyedCheck is the SQL (the same in SQLite and PostgreSQL) that counts
// the rows breaking a table's unit_keyed declaration: rows without a unit,
// and units with more than one row.
func UnitKeyedCheck(t *ir.Table) string {
	unit, table := pglex.QuoteIdentAlways(t.PrivacyUnit), pglex.QuoteIdentAlways(t.Name)
	return "SELECT COUNT(*) FROM (SELECT 1 FROM " + table + " WHERE " + unit + " IS NULL " +
		"UNION ALL SELECT 1 FROM (SELECT 1 FROM " + table + " GROUP BY " + unit + " HAVING COUNT(*) > 1) AS dup) AS broken"
}

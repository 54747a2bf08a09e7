package planner

import (
	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
	"countwall/pgtypes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/xwb1989/sqlparser"
)

// Parse reads one analyst statement and validates it against the catalog
// and each table's policy. args are the values bound to $1..$n by the wire's
// extended protocol (nil elements are SQL NULL); each becomes a typed literal
// in the IR, never text pasted into SQL. It is Prepare and Bind at once.
func Parse(sql string, args []*string, cat *ir.Catalog) (ir.Statement, error) {
	return Prepare(sql, cat).Bind(args)
}

// DescribeParams validates a statement whose placeholders are not yet bound
// and returns the type of each $n, as its use gives it.
func DescribeParams(sql string, cat *ir.Catalog) ([]pgtypes.OID, error) {
	types, _, err := Prepare(sql, cat).Describe()
	return types, err
}

// errInvalidUTF8 is PostgreSQL's refusal of bytes that are not UTF-8 in a
// statement or a parameter, whatever they are compared with.
var errInvalidUTF8 = pgerror.Errorf(pgerror.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")

// parser reads one statement's tree into the IR: with bound arguments, or
// unbound, collecting the type each $n is compared with.
type parser struct {
	cat        *ir.Catalog
	args       []*string
	bind       bool // args are real values, not placeholders
	table      *ir.Table
	leaves     int
	declared   []pgtypes.OID // the types the client declared for $1..$n (Prepared.Declare)
	paramTypes []pgtypes.OID // the type each $n's first use gave it; Unspecified before
	depth      int           // nesting of the condition being read
	negated    bool          // the condition being read is under an odd number of NOTs
	ownText    bool          // parse the statement's own text, not its shape's tree (tests)
}

// statement reads sql with the parser's arguments (or unbound).
func (p *parser) statement(sql string) (ir.Statement, error) {
	pr := prepare(sql, p.cat, p.ownText, nil)
	if !p.bind {
		return pr.read(p)
	}
	pr.Declare(p.declared)
	st, _, err := pr.bindWith(p)
	return st, err
}

// fromTokens decides what a statement's tokens alone decide: an empty
// statement, SET, SHOW, transaction control, and the refusals of other
// statements by their first word or a catalog name. A nil statement and a
// nil error mean the statement needs the parser.
func fromTokens(toks []pglex.Token) (ir.Statement, error) {
	if len(toks) == 0 {
		return &ir.Chatter{Kind: ir.ChatterEmpty}, nil
	}
	first := toks[0]
	if first.Kind != pglex.Word && !(first.Kind == pglex.Op && first.Text == "(") {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "syntax error at or near %s", pglex.Near(first)).
			WithHint("countwall answers SELECT COUNT(*) queries")
	}
	switch first.Text {
	case "set":
		return parseSet(toks)
	case "show":
		return parseShow(toks)
	case "reset":
		return parseReset(toks)
	case "begin", "start":
		return &ir.Chatter{Kind: ir.ChatterBegin}, nil
	case "commit", "end":
		return &ir.Chatter{Kind: ir.ChatterCommit}, nil
	case "rollback", "abort":
		if sp, ok, err := parseSavepoint(toks, ir.ChatterRollbackTo); ok {
			return sp, err
		}
		return &ir.Chatter{Kind: ir.ChatterRollback}, nil
	case "savepoint":
		sp, _, err := parseSavepoint(toks, ir.ChatterSavepoint)
		return sp, err
	case "release":
		sp, _, err := parseSavepoint(toks, ir.ChatterRelease)
		return sp, err
	case "discard":
		return parseDiscard(toks)
	case "deallocate":
		return parseDeallocate(toks)
	// EXECUTE is read before, by readExecute, which keeps its arguments.
	case "prepare":
		// A PREPARE the Engine reads before the planner (ReadOuter); what
		// reaches here is one it does not take.
		if _, err := prepareAs("", toks); err != nil {
			return nil, err
		}
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "PREPARE is answered by the firewall's front door only")
	case "fetch":
		return parseFetch(toks, ir.ChatterFetch)
	case "move":
		return parseFetch(toks, ir.ChatterMove)
	case "close":
		return parseClose(toks)
	case "declare":
		// A DECLARE the Engine reads before the planner (ReadOuter);
		// what reaches here is one it does not take.
		if _, _, _, err := declareCursor("", toks); err != nil {
			return nil, err
		}
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "DECLARE CURSOR is answered by the firewall's front door only")
	case "copy":
		// A COPY (query) TO STDOUT the Engine reads before the planner
		// (ReadOuter); what reaches here is a COPY it does not take.
		if _, _, err := copyOut("", toks); err != nil {
			return nil, err
		}
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "COPY (SELECT ...) TO STDOUT is answered by the firewall's front door only")
	case "insert", "update", "delete", "replace", "create", "drop", "alter", "truncate", "grant", "revoke", "vacuum", "reindex", "analyze":
		return nil, pgerror.Errorf(pgerror.ReadOnlySQLTransaction, "%s is not allowed: countwall answers COUNT queries only and never writes", strings.ToUpper(first.Text))
	case "pragma", "attach", "detach":
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "%s is not allowed", strings.ToUpper(first.Text))
	case "with":
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "common table expressions (WITH) are not supported")
	case "select", "(":
	default:
		return nil, pgerror.Errorf(pgerror.SyntaxError, "syntax error at or near %s", pglex.Near(first)).
			WithHint(fmt.Sprintf("statement %s is not supported; countwall answers SELECT COUNT(*) queries", strings.ToUpper(first.Text)))
	}
	if namesCatalog(toks) {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "catalog queries are not supported: countwall exposes only the configured tables")
	}
	return nil, nil
}

// fromTree reads a parse tree into a statement.
func (p *parser) fromTree(ast sqlparser.Statement) (ir.Statement, error) {
	switch s := ast.(type) {
	case *sqlparser.Select:
		return p.selectStmt(s)
	case *sqlparser.Union:
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "UNION is not supported")
	case *sqlparser.ParenSelect:
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "parenthesised SELECT is not supported")
	default:
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "only SELECT COUNT(*) queries are supported")
	}
}

func (p *parser) maxBytes() int {
	limit := 0
	if p.cat != nil {
		for _, t := range p.cat.Tables {
			limit = max(limit, t.Policy.MaxStatementBytes)
		}
	}
	if limit <= 0 {
		limit = ir.DefaultPolicy().MaxStatementBytes
	}
	return limit
}

func (p *parser) selectStmt(s *sqlparser.Select) (ir.Statement, error) {
	if c := p.chatterSelect(s); c != nil {
		return c, nil
	}
	if err := unsupportedClause(s); err != nil {
		return nil, err
	}
	if err := p.from(s.From); err != nil {
		return nil, err
	}
	q := &ir.Query{Table: p.table.Name, Alias: "count"}
	items, err := p.selectList(s.SelectExprs, q)
	if err != nil {
		return nil, err
	}
	if err := p.groupBy(s.GroupBy, items, q); err != nil {
		return nil, err
	}
	if err := p.orderBy(s.OrderBy, items, q); err != nil {
		return nil, err
	}
	if s.Where != nil {
		pred, err := p.pred(s.Where.Expr)
		if err != nil {
			return nil, err
		}
		if p.leaves > p.table.Policy.MaxConditions {
			return nil, pgerror.Errorf(pgerror.ProgramLimitExceeded, "WHERE has %d conditions, over the limit of %d", p.leaves, p.table.Policy.MaxConditions)
		}
		q.Where = pred
	}
	return q, nil
}

// unsupportedClause refuses the clauses of a SELECT that a count query never
// has.
func unsupportedClause(s *sqlparser.Select) error {
	switch {
	case s.Distinct != "":
		return pgerror.Errorf(pgerror.FeatureNotSupported, "SELECT DISTINCT is not supported")
	case s.Having != nil:
		return pgerror.Errorf(pgerror.FeatureNotSupported, "HAVING is not supported: it would filter on true counts")
	case s.Limit != nil:
		return pgerror.Errorf(pgerror.FeatureNotSupported, "LIMIT and OFFSET are not supported")
	case s.Lock != "":
		return pgerror.Errorf(pgerror.FeatureNotSupported, "locking clauses are not supported")
	}
	return nil
}

// chatterSelect recognises SELECT version() and SELECT current_setting('x').
func (p *parser) chatterSelect(s *sqlparser.Select) *ir.Chatter {
	if len(s.SelectExprs) != 1 || len(s.From) != 1 {
		return nil
	}
	ae, ok := s.SelectExprs[0].(*sqlparser.AliasedExpr)
	if !ok {
		return nil
	}
	f, ok := ae.Expr.(*sqlparser.FuncExpr)
	if !ok {
		return nil
	}
	// Checked after the select list, which rules out every COUNT query
	// without formatting the table name.
	name := f.Name.Lowered()
	if name != "version" && name != "current_setting" {
		return nil
	}
	if t, ok := s.From[0].(*sqlparser.AliasedTableExpr); !ok || sqlparser.String(t.Expr) != "dual" {
		return nil
	}
	switch name {
	case "version":
		return &ir.Chatter{Kind: ir.ChatterVersion}
	case "current_setting":
		if len(f.Exprs) == 1 {
			if a, ok := f.Exprs[0].(*sqlparser.AliasedExpr); ok {
				if v, ok := a.Expr.(*sqlparser.SQLVal); ok && v.Type == sqlparser.StrVal {
					return &ir.Chatter{Kind: ir.ChatterCurrentSetting, Value: strings.ToLower(string(v.Val))}
				}
			}
		}
	}
	return nil
}

func (p *parser) from(from sqlparser.TableExprs) error {
	if len(from) != 1 {
		return pgerror.Errorf(pgerror.FeatureNotSupported, "a query must read exactly one table; joins are not supported")
	}
	switch t := from[0].(type) {
	case *sqlparser.JoinTableExpr:
		return pgerror.Errorf(pgerror.FeatureNotSupported, "JOIN is not supported")
	case *sqlparser.ParenTableExpr:
		return pgerror.Errorf(pgerror.FeatureNotSupported, "parenthesised FROM is not supported")
	case *sqlparser.AliasedTableExpr:
		switch e := t.Expr.(type) {
		case *sqlparser.Subquery:
			return pgerror.Errorf(pgerror.FeatureNotSupported, "subqueries are not supported")
		case sqlparser.TableName:
			if e.Name.String() == "dual" && e.Qualifier.IsEmpty() {
				return pgerror.Errorf(pgerror.SyntaxError, "a query needs FROM table")
			}
			// The configured tables are schema public's, as the catalog
			// shows them to clients that qualify what they list.
			if q := e.Qualifier.String(); q != "" && q != "public" {
				return pgerror.Errorf(pgerror.InvalidSchemaName, "schema %q does not exist", q).
					WithHint("the configured tables are in schema public")
			}
			name := e.Name.String()
			var tbl *ir.Table
			if p.cat != nil {
				tbl = p.cat.Tables[name]
			}
			if tbl == nil {
				return &pgerror.Error{Code: pgerror.UndefinedTable, Message: fmt.Sprintf("relation %q does not exist", name)}
			}
			p.table = tbl
			return nil
		}
	}
	return pgerror.Errorf(pgerror.FeatureNotSupported, "unsupported FROM clause")
}

func (p *parser) column(c *sqlparser.ColName) (string, error) {
	name := c.Name.String()
	if !c.Qualifier.IsEmpty() && c.Qualifier.Name.String() != p.table.Name {
		return "", pgerror.Errorf(pgerror.UndefinedTable, "missing FROM-clause entry for table %q", c.Qualifier.Name.String())
	}
	if _, ok := p.table.Columns[name]; !ok {
		return "", &pgerror.Error{Code: pgerror.UndefinedColumn, Message: fmt.Sprintf("column %q does not exist in table %q", name, p.table.Name)}
	}
	return name, nil
}

// aggregate reads COUNT(*), COUNT(1), COUNT(DISTINCT unit) and the threshold
// forms COUNT(*) > b and COUNT(*) >= b.
func (p *parser) aggregate(e sqlparser.Expr, q *ir.Query) error {
	if cmp, ok := e.(*sqlparser.ComparisonExpr); ok {
		f, isCount := cmp.Left.(*sqlparser.FuncExpr)
		if !isCount || f.Name.Lowered() != "count" {
			return pgerror.Errorf(pgerror.FeatureNotSupported, "only COUNT(*) > b and COUNT(*) >= b may be compared in the select list")
		}
		if cmp.Operator != sqlparser.GreaterThanStr && cmp.Operator != sqlparser.GreaterEqualStr {
			return pgerror.Errorf(pgerror.FeatureNotSupported, "threshold queries use COUNT(*) > b or COUNT(*) >= b, not %s", cmp.Operator)
		}
		b, ok := intLiteral(cmp.Right)
		if !ok {
			return pgerror.Errorf(pgerror.DatatypeMismatch, "the threshold of COUNT(*) %s b must be an integer literal", cmp.Operator)
		}
		if cmp.Operator == sqlparser.GreaterEqualStr {
			if b == math.MinInt64 {
				return pgerror.Errorf(pgerror.InvalidParameterValue, "threshold out of range")
			}
			b--
		}
		q.Threshold = &ir.Threshold{Bound: b}
		e = f
	}
	f, ok := e.(*sqlparser.FuncExpr)
	if !ok {
		return pgerror.Errorf(pgerror.FeatureNotSupported, "only COUNT(*) may be selected besides the GROUP BY columns")
	}
	name := f.Name.Lowered()
	if name == castCall {
		return pgerror.Errorf(pgerror.FeatureNotSupported, "a cast of an aggregate is not supported: the answer's type is the aggregate's").
			WithHint("Select COUNT(*), SUM(col) or AVG(col) without :: or CAST, and convert the answer in the client.")
	}
	if name != "count" {
		return pgerror.Errorf(pgerror.FeatureNotSupported, "function %s is not supported in the select list; only COUNT is answered", strings.ToUpper(name))
	}
	if len(f.Exprs) != 1 {
		return pgerror.Errorf(pgerror.SyntaxError, "COUNT takes one argument")
	}
	switch a := f.Exprs[0].(type) {
	case *sqlparser.StarExpr:
		if f.Distinct {
			return pgerror.Errorf(pgerror.SyntaxError, "COUNT(DISTINCT *) is not valid")
		}
		q.Agg = ir.CountRows
		return nil
	case *sqlparser.AliasedExpr:
		if v, ok := a.Expr.(*sqlparser.SQLVal); ok && v.Type == sqlparser.IntVal && string(v.Val) == "1" && !f.Distinct {
			q.Agg = ir.CountRows
			return nil
		}
		col, ok := a.Expr.(*sqlparser.ColName)
		if !ok {
			return pgerror.Errorf(pgerror.FeatureNotSupported, "COUNT accepts *, 1 or DISTINCT of the privacy-unit column")
		}
		cname, err := p.column(col)
		if err != nil {
			return err
		}
		if !f.Distinct {
			return pgerror.Errorf(pgerror.FeatureNotSupported, "COUNT(%s) is not supported; use COUNT(*) or COUNT(DISTINCT %s)", cname, p.table.PrivacyUnit)
		}
		if cname != p.table.PrivacyUnit {
			return pgerror.Errorf(pgerror.FeatureNotSupported, "COUNT(DISTINCT %s) is not supported: only the privacy-unit column %q may be counted distinctly", cname, p.table.PrivacyUnit)
		}
		q.Agg = ir.CountDistinct
		return nil
	}
	return pgerror.Errorf(pgerror.FeatureNotSupported, "COUNT accepts *, 1 or DISTINCT of the privacy-unit column")
}

func intLiteral(e sqlparser.Expr) (int64, bool) {
	neg := false
	if u, ok := e.(*sqlparser.UnaryExpr); ok && u.Operator == sqlparser.UMinusStr {
		neg, e = true, u.Expr
	}
	v, ok := e.(*sqlparser.SQLVal)
	if !ok || v.Type != sqlparser.IntVal {
		return 0, false
	}
	s := string(v.Val)
	if neg {
		s = "-" + s
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (p *parser) checkGroupLimit(cols []string) error {
	if len(cols) == 0 {
		return nil
	}
	cells := int64(1)
	for _, c := range cols {
		d := p.table.Columns[c].Domain
		if d == nil {
			return nil // the store checks the groups it finds
		}
		cells *= d.Size()
		if cells > int64(p.table.Policy.MaxGroups) {
			return pgerror.Errorf(pgerror.ProgramLimitExceeded, "GROUP BY %s has more than %d cells (max_groups)", strings.Join(cols, ", "), p.table.Policy.MaxGroups)
		}
	}
	return nil
}

package planner

import (
	"countwall/pgerror"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/xwb1989/sqlparser"
)

// Parse reads one analyst statement and validates it against the catalog
// and each table's policy. args are the values bound to $1..$n by the wire's
// extended protocol (nil elements are SQL NULL); each becomes a typed literal
// in the IR, never text pasted into SQL.
func Parse(sql string, args []*string, cat *Catalog) (Statement, error) {
	p := &parser{cat: cat, args: args, bind: true}
	return p.statement(sql)
}

// DescribeParams validates a statement whose placeholders are not yet bound
// and returns the type each $n is compared with.
func DescribeParams(sql string, cat *Catalog) ([]ColumnType, error) {
	p := &parser{cat: cat}
	if _, err := p.statement(sql); err != nil {
		return nil, err
	}
	out := make([]ColumnType, len(p.paramTypes))
	for i, t := range p.paramTypes {
		if t == nil {
			return nil, pgerror.Errorf(pgerror.SyntaxError, "parameter $%d is not used in a comparison", i+1)
		}
		out[i] = *t
	}
	return out, nil
}

type parser struct {
	cat        *Catalog
	args       []*string
	bind       bool // args are real values, not placeholders
	table      *Table
	leaves     int
	paramTypes []*ColumnType
}

var (
	placeholderRE = regexp.MustCompile(`\$([0-9]+)`)
	catalogRE     = regexp.MustCompile(`(?i)\b(pg_catalog|information_schema)\b|\bpg_[a-z_]+\b`)
)

func (p *parser) statement(sql string) (st Statement, err error) {
	defer func() {
		// The SQL parser is not hardened against every input; a panic in it is
		// a syntax error as far as the analyst is concerned.
		if r := recover(); r != nil {
			st, err = nil, pgerror.Errorf(pgerror.SyntaxError, "could not parse the statement")
		}
	}()
	if limit := p.maxBytes(); len(sql) > limit {
		return nil, pgerror.Errorf(pgerror.ProgramLimitExceeded, "statement is %d bytes, over the limit of %d", len(sql), limit)
	}
	text := stripComments(sql)
	pieces, perr := sqlparser.SplitStatementToPieces(text)
	if perr == nil {
		n := 0
		for _, piece := range pieces {
			if strings.TrimSpace(piece) != "" {
				n++
			}
		}
		if n > 1 {
			return nil, pgerror.Errorf(pgerror.SyntaxError, "several statements in one string are not allowed; send one statement at a time")
		}
	}
	text = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), ";"))
	if text == "" {
		return &Chatter{Kind: "empty"}, nil
	}
	words := strings.Fields(strings.ToLower(text))
	switch words[0] {
	case "set":
		return parseSet(text)
	case "show":
		return parseShow(text)
	case "begin", "start":
		return &Chatter{Kind: "begin"}, nil
	case "commit", "end":
		return &Chatter{Kind: "commit"}, nil
	case "rollback", "abort":
		return &Chatter{Kind: "rollback"}, nil
	case "discard":
		return &Chatter{Kind: "discard"}, nil
	case "insert", "update", "delete", "replace", "create", "drop", "alter", "truncate", "grant", "revoke", "vacuum", "reindex", "analyze", "copy":
		return nil, pgerror.Errorf(pgerror.ReadOnlySQLTransaction, "%s is not allowed: countwall answers COUNT queries only and never writes", strings.ToUpper(words[0]))
	case "pragma", "attach", "detach":
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "%s is not allowed", strings.ToUpper(words[0]))
	case "with":
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "common table expressions (WITH) are not supported")
	case "select":
	default:
		return nil, pgerror.Errorf(pgerror.SyntaxError, "syntax error: statement %s is not supported; countwall answers SELECT COUNT(*) queries", strings.ToUpper(words[0]))
	}
	if catalogRE.MatchString(stripStrings(text)) {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "catalog queries are not supported: countwall exposes only the configured tables")
	}
	text, err = p.translatePlaceholders(text)
	if err != nil {
		return nil, err
	}
	ast, perr := sqlparser.Parse(text)
	if perr != nil {
		return nil, p.syntaxError(text)
	}
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

// syntaxError names the analyst's mistake where a common one explains it.
func (p *parser) syntaxError(text string) error {
	lower := strings.ToLower(text)
	switch {
	case strings.Contains(lower, " over ("), strings.Contains(lower, " over("):
		return pgerror.Errorf(pgerror.FeatureNotSupported, "window functions are not supported")
	case strings.Contains(lower, "::"):
		return pgerror.Errorf(pgerror.FeatureNotSupported, "type casts (::) are not supported")
	}
	return pgerror.Errorf(pgerror.SyntaxError, "syntax error: countwall accepts SELECT [group columns,] COUNT(*) FROM table [WHERE ...] [GROUP BY ...] [ORDER BY ...]")
}

func (p *parser) maxBytes() int {
	limit := 0
	if p.cat != nil {
		for _, t := range p.cat.Tables {
			limit = max(limit, t.Policy.MaxStatementBytes)
		}
	}
	if limit <= 0 {
		limit = DefaultPolicy().MaxStatementBytes
	}
	return limit
}

// stripComments removes leading -- and /* */ comments (drivers ping with
// "-- ping").
func stripComments(sql string) string {
	text := strings.TrimSpace(sql)
	for {
		switch {
		case strings.HasPrefix(text, "--"):
			nl := strings.IndexByte(text, '\n')
			if nl < 0 {
				return ""
			}
			text = strings.TrimSpace(text[nl+1:])
		case strings.HasPrefix(text, "/*"):
			end := strings.Index(text, "*/")
			if end < 0 {
				return text
			}
			text = strings.TrimSpace(text[end+2:])
		default:
			return text
		}
	}
}

// stripStrings blanks quoted strings so that identifier checks do not look
// inside literals.
func stripStrings(s string) string {
	var b strings.Builder
	in := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in == 0 && (c == '\'' || c == '"'):
			in = c
			b.WriteByte(' ')
		case in != 0 && c == in:
			in = 0
			b.WriteByte(' ')
		case in != 0:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// translatePlaceholders rewrites $n outside string literals into the SQL
// parser's value-argument form :vn.
func (p *parser) translatePlaceholders(text string) (string, error) {
	var b strings.Builder
	in := byte(0)
	for i := 0; i < len(text); i++ {
		c := text[i]
		if in != 0 {
			if c == in {
				in = 0
			}
			b.WriteByte(c)
			continue
		}
		if c == '\'' || c == '"' {
			in = c
			b.WriteByte(c)
			continue
		}
		if c == '$' {
			j := i + 1
			for j < len(text) && text[j] >= '0' && text[j] <= '9' {
				j++
			}
			if j == i+1 {
				return "", pgerror.Errorf(pgerror.SyntaxError, "a $ must be followed by a parameter number")
			}
			n, err := strconv.Atoi(text[i+1 : j])
			if err != nil || n < 1 || n > 1000 {
				return "", pgerror.Errorf(pgerror.SyntaxError, "parameter number must be between $1 and $1000")
			}
			if p.bind && n > len(p.args) {
				return "", pgerror.Errorf(pgerror.InvalidParameterValue, "parameter $%d has no bound value (%d given)", n, len(p.args))
			}
			fmt.Fprintf(&b, ":v%d", n)
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}

var setRE = regexp.MustCompile(`(?is)^set\s+(?:session\s+|local\s+)?([a-z_][a-z0-9_.]*)\s*(?:=|\s+to\s+|\s)\s*(.*)$`)

func parseSet(text string) (Statement, error) {
	m := setRE.FindStringSubmatch(text)
	if m == nil {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "SET needs a name and a value: SET name = value")
	}
	name := strings.ToLower(m[1])
	value := strings.TrimSpace(m[2])
	if name == "time" && strings.HasPrefix(strings.ToLower(value), "zone") {
		name, value = "timezone", strings.TrimSpace(value[4:])
	}
	if value == "" {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "SET %s needs a value", name)
	}
	return &Set{Name: name, Value: unquoteList(value)}, nil
}

// unquoteList removes the quotes of a value or of each item of a list.
func unquoteList(v string) string {
	parts := strings.Split(v, ",")
	for i, part := range parts {
		part = strings.TrimSpace(part)
		if len(part) >= 2 && (part[0] == '\'' || part[0] == '"') && part[len(part)-1] == part[0] {
			part = strings.ReplaceAll(part[1:len(part)-1], string(part[0])+string(part[0]), string(part[0]))
		}
		parts[i] = part
	}
	return strings.Join(parts, ", ")
}

var showRE = regexp.MustCompile(`(?is)^show\s+([a-z_][a-z0-9_.]*)$`)

func parseShow(text string) (Statement, error) {
	m := showRE.FindStringSubmatch(text)
	if m == nil {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "SHOW needs one setting name: SHOW budget")
	}
	name := strings.ToLower(m[1])
	if name == "all" {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "SHOW ALL is not supported; SHOW budget, epsilon, delta or mechanism")
	}
	return &Show{Name: name}, nil
}

func (p *parser) selectStmt(s *sqlparser.Select) (Statement, error) {
	if c := p.chatterSelect(s); c != nil {
		return c, nil
	}
	switch {
	case s.Distinct != "":
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "SELECT DISTINCT is not supported")
	case s.Having != nil:
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "HAVING is not supported: it would filter on true counts")
	case s.Limit != nil:
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "LIMIT and OFFSET are not supported")
	case s.Lock != "":
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "locking clauses are not supported")
	}
	if err := p.from(s.From); err != nil {
		return nil, err
	}
	q := &Query{Table: p.table.Name, Alias: "count"}
	var plain []string
	aggSeen := false
	for _, se := range s.SelectExprs {
		switch e := se.(type) {
		case *sqlparser.StarExpr:
			return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "SELECT * is not supported: select COUNT(*) and, optionally, the GROUP BY columns")
		case *sqlparser.Nextval:
			return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "NEXT VALUE is not supported")
		case *sqlparser.AliasedExpr:
			if col, ok := e.Expr.(*sqlparser.ColName); ok {
				name, err := p.column(col)
				if err != nil {
					return nil, err
				}
				if !e.As.IsEmpty() {
					return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "aliases on group columns are not supported (column %q)", name)
				}
				plain = append(plain, name)
				continue
			}
			if aggSeen {
				return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "only one COUNT may be selected")
			}
			if err := p.aggregate(e.Expr, q); err != nil {
				return nil, err
			}
			aggSeen = true
			if !e.As.IsEmpty() {
				q.Alias = strings.ToLower(e.As.String())
			}
		}
	}
	if !aggSeen {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "a query must select COUNT(*); bare columns are not answered")
	}
	for _, g := range s.GroupBy {
		col, ok := g.(*sqlparser.ColName)
		if !ok {
			return nil, pgerror.Errorf(pgerror.GroupingError, "GROUP BY accepts plain column names only")
		}
		name, err := p.column(col)
		if err != nil {
			return nil, err
		}
		q.GroupBy = append(q.GroupBy, name)
	}
	if err := sameColumns(plain, q.GroupBy); err != nil {
		return nil, err
	}
	q.GroupBy = plain
	for _, g := range q.GroupBy {
		if g == p.table.PrivacyUnit {
			return nil, pgerror.Errorf(pgerror.InsufficientPrivilege, "GROUP BY the privacy-unit column %q is not allowed", g)
		}
	}
	if err := p.checkGroupLimit(q.GroupBy); err != nil {
		return nil, err
	}
	for _, o := range s.OrderBy {
		col, ok := o.Expr.(*sqlparser.ColName)
		if !ok {
			return nil, pgerror.Errorf(pgerror.GroupingError, "ORDER BY accepts group column names only")
		}
		name := strings.ToLower(col.Name.String())
		if !contains(q.GroupBy, name) {
			return nil, pgerror.Errorf(pgerror.GroupingError, "ORDER BY %q: only GROUP BY columns may be ordered on", name)
		}
		q.OrderBy = append(q.OrderBy, Order{Column: name, Desc: o.Direction == sqlparser.DescScr})
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

// chatterSelect recognises SELECT version() and SELECT current_setting('x').
func (p *parser) chatterSelect(s *sqlparser.Select) *Chatter {
	if len(s.SelectExprs) != 1 || len(s.From) != 1 {
		return nil
	}
	if t, ok := s.From[0].(*sqlparser.AliasedTableExpr); !ok || sqlparser.String(t.Expr) != "dual" {
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
	switch f.Name.Lowered() {
	case "version":
		return &Chatter{Kind: "version"}
	case "current_setting":
		if len(f.Exprs) == 1 {
			if a, ok := f.Exprs[0].(*sqlparser.AliasedExpr); ok {
				if v, ok := a.Expr.(*sqlparser.SQLVal); ok && v.Type == sqlparser.StrVal {
					return &Chatter{Kind: "current_setting", Value: strings.ToLower(string(v.Val))}
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
			if !e.Qualifier.IsEmpty() {
				return pgerror.Errorf(pgerror.FeatureNotSupported, "schema-qualified table names are not supported (%q)", e.Qualifier.String()+"."+e.Name.String())
			}
			name := strings.ToLower(e.Name.String())
			var tbl *Table
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
	name := strings.ToLower(c.Name.String())
	if !c.Qualifier.IsEmpty() && strings.ToLower(c.Qualifier.Name.String()) != p.table.Name {
		return "", pgerror.Errorf(pgerror.UndefinedTable, "missing FROM-clause entry for table %q", strings.ToLower(c.Qualifier.Name.String()))
	}
	if _, ok := p.table.Columns[name]; !ok {
		return "", &pgerror.Error{Code: pgerror.UndefinedColumn, Message: fmt.Sprintf("column %q does not exist in table %q", name, p.table.Name)}
	}
	return name, nil
}

// aggregate reads COUNT(*), COUNT(1), COUNT(DISTINCT unit) and the threshold
// forms COUNT(*) > b and COUNT(*) >= b.
func (p *parser) aggregate(e sqlparser.Expr, q *Query) error {
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
		q.Threshold = &Threshold{Bound: b}
		e = f
	}
	f, ok := e.(*sqlparser.FuncExpr)
	if !ok {
		return pgerror.Errorf(pgerror.FeatureNotSupported, "only COUNT(*) may be selected besides the GROUP BY columns")
	}
	name := f.Name.Lowered()
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
		q.Agg = CountRows
		return nil
	case *sqlparser.AliasedExpr:
		if v, ok := a.Expr.(*sqlparser.SQLVal); ok && v.Type == sqlparser.IntVal && string(v.Val) == "1" && !f.Distinct {
			q.Agg = CountRows
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
		q.Agg = CountDistinct
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

func sameColumns(selected, grouped []string) error {
	for _, s := range selected {
		if !contains(grouped, s) {
			return pgerror.Errorf(pgerror.GroupingError, "column %q must appear in the GROUP BY clause", s)
		}
	}
	for _, g := range grouped {
		if !contains(selected, g) {
			return pgerror.Errorf(pgerror.GroupingError, "GROUP BY column %q must also be selected", g)
		}
	}
	seen := map[string]bool{}
	for _, s := range selected {
		if seen[s] {
			return pgerror.Errorf(pgerror.GroupingError, "column %q is selected twice", s)
		}
		seen[s] = true
	}
	return nil
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

package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"countwall/pgerror"
	"countwall/pglex"
)

// Limits of one catalog statement: the catalog is small, so a statement
// that needs more is a mistake or an attempt to burn CPU.
const (
	statementTimeout = 5 * time.Second
	maxRows          = 10000
	maxStatement     = 64 << 10 // bytes; JDBC's longest discovery query is under 2 KiB
)

// Catalog answers catalog queries from a model. It is safe for concurrent
// use; statements run one at a time on its own in-memory database.
type Catalog struct {
	mu    sync.Mutex
	db    *sql.DB
	conn  *sql.Conn
	model *Model
	// timeout is statementTimeout; tests shorten it.
	timeout time.Duration
}

// Open makes a catalog holding the model. Close releases it.
func Open(ctx context.Context, m *Model) (*Catalog, error) {
	if err := registerSQLiteFunctions(); err != nil {
		return nil, err
	}
	// A private in-memory database: nothing but the catalog is ever in it,
	// and it is never the protected database.
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("catalog: %w", err)
	}
	c := &Catalog{db: db, conn: conn, timeout: statementTimeout}
	if err := c.create(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.Load(ctx, m); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Catalog) create(ctx context.Context) error {
	stmts := []string{
		"ATTACH DATABASE ':memory:' AS pg_catalog",
		"ATTACH DATABASE ':memory:' AS information_schema",
		namesTable.createStatement(),
	}
	for _, r := range relations {
		stmts = append(stmts, r.createStatement())
	}
	for _, s := range stmts {
		if _, err := c.conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("catalog: creating the catalog database: %w", err)
		}
	}
	return nil
}

// Load replaces what the catalog tells with m (a config reload).
func (c *Catalog) Load(ctx context.Context, m *Model) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := fill(ctx, c.conn, m); err != nil {
		return err
	}
	c.model = m
	return nil
}

// Close releases the catalog's database.
func (c *Catalog) Close() error {
	return errors.Join(c.conn.Close(), c.db.Close())
}

// Handles reports whether a statement, by its tokens (pglex), is a catalog
// statement: a SELECT that names pg_catalog, information_schema or a pg_
// relation or function; a SELECT without FROM that calls a catalog
// function (current_schema(), current_database()) or casts to a reg type
// (pgx's $1::regtype); a connection check (SELECT 1); or SHOW TRANSACTION
// ISOLATION LEVEL. Everything else, the COUNT language and the chatter
// whose answers depend on the session's settings (version(),
// current_setting()), is the planner's. The Engine asks it once, of the
// tokens it lexes once, when it prepares a statement.
func Handles(toks []pglex.Token) bool {
	if len(toks) == 0 {
		return false
	}
	if isShowIsolation(toks) {
		return true
	}
	first := toks[0]
	if first.Kind != pglex.Word || (first.Text != "select" && first.Text != "with") {
		return false
	}
	if len(toks) == 2 && toks[1].Kind == pglex.Number || len(toks) == 3 && toks[1].Kind == pglex.Number && toks[2].Text == ";" {
		return true
	}
	hasFrom, callsCatalog := false, false
	for i, t := range toks {
		if t.NamesCatalog() {
			return true
		}
		switch t.Kind {
		case pglex.Word: // folded to lower case by the lexer
			// FROM a set-returning call (pgcli's SELECT * FROM
			// unnest(current_schemas(true))) reads no table.
			hasFrom = hasFrom || t.Text == "from" && !fromSetReturning(toks[i+1:])
			callsCatalog = callsCatalog || catalogWords[t.Text]
		case pglex.QuotedIdent:
			callsCatalog = callsCatalog || catalogWords[strings.ToLower(t.Text)]
		}
	}
	return !hasFrom && callsCatalog
}

// HandlesText is Handles for a statement the analysts' lexer refuses (an
// escape string E'...', which psql's \l sends) or the planner does not
// lex (one over its size limit): the catalog reads it by its own rules.
func HandlesText(sql string) bool {
	toks, err := lex(sql)
	return err == nil && Handles(toks)
}

// fromSetReturning reports whether the tokens after a FROM start with a
// call of a set-returning function the catalog answers.
func fromSetReturning(toks []pglex.Token) bool {
	return len(toks) > 1 && toks[0].Kind == pglex.Word && setReturning[toks[0].Text] != nil && toks[1].Text == "("
}

// catalogWords mark a SELECT without FROM as a catalog statement.
var catalogWords = map[string]bool{
	"current_schema": true, "current_schemas": true, "current_database": true, "current_catalog": true,
	"current_user": true, "session_user": true, "current_role": true, "format_type": true,
	"obj_description": true, "col_description": true, "has_table_privilege": true,
	"has_schema_privilege": true, "has_database_privilege": true, "regtype": true, "regclass": true,
	"regnamespace": true,
}

// OutputColumn is an output column: its name and the PostgreSQL type it is
// sent as.
type OutputColumn struct {
	Name string
	Type WireType
}

// WireType is the type of an output column on the wire.
type WireType int

const (
	WireText WireType = iota
	WireInt8
	WireFloat8
	WireBool
)

// Value is one output value: NULL, or the text, integer, real number or
// boolean its column's type says.
type Value struct {
	Null  bool
	Text  string
	Int   int64
	Float float64
	Bool  bool
}

// Result is a catalog statement's answer.
type Result struct {
	Columns []OutputColumn
	Rows    [][]Value
}

// Query answers a catalog statement. args are the values of $1..$n (text,
// nil for NULL).
func (c *Catalog) Query(ctx context.Context, s Session, sql string, args []*string) (*Result, error) {
	if len(sql) > maxStatement {
		return nil, pgerror.Errorf(pgerror.ProgramLimitExceeded, "catalog statement is %d bytes, over the limit of %d", len(sql), maxStatement)
	}
	if res, ok := showChatter(sql); ok {
		return res, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	query, booleans, err := c.prepare(s, sql)
	var res *Result
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		res, err = c.run(ctx, query, args, booleans)
	}
	if err != nil {
		if empty, ok := provablyEmpty(sql); ok {
			return empty, nil
		}
		return nil, err
	}
	return res, nil
}

// Describe says what a catalog statement returns and the types of its
// parameters, without its arguments: it runs with every parameter NULL.
func (c *Catalog) Describe(ctx context.Context, s Session, sql string) (columns []OutputColumn, params []WireType, err error) {
	toks, err := lex(sql)
	if err != nil {
		return nil, nil, err
	}
	params = paramTypes(toks)
	res, err := c.Query(ctx, s, sql, make([]*string, len(params)))
	if err != nil {
		return nil, nil, err
	}
	return res.Columns, params, nil
}

// prepare translates a statement; booleans are the positions of its
// columns PostgreSQL types as boolean though SQLite computes integers.
func (c *Catalog) prepare(s Session, sql string) (query string, booleans map[int]bool, err error) {
	toks, err := lex(sql)
	if err != nil {
		return "", nil, err
	}
	toks, booleans = nameColumns(toks)
	query, err = translate(toks, s, c.model)
	return query, booleans, err
}

func (c *Catalog) run(ctx context.Context, query string, args []*string, booleans map[int]bool) (*Result, error) {
	bound := make([]any, len(args))
	for i, a := range args {
		if a != nil {
			bound[i] = *a
		}
	}
	rows, err := c.conn.QueryContext(ctx, query, bound...)
	if err != nil {
		return nil, sqliteRefusal(ctx, err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, sqliteRefusal(ctx, err)
	}
	res := &Result{Columns: make([]OutputColumn, len(types))}
	for i, t := range types {
		res.Columns[i] = OutputColumn{Name: t.Name(), Type: wireType(t.DatabaseTypeName())}
	}
	raw := make([]any, len(types))
	ptrs := make([]any, len(types))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	var all [][]any
	for rows.Next() {
		if len(all) == maxRows {
			return nil, pgerror.Errorf(pgerror.ProgramLimitExceeded, "catalog query returns more than %d rows", maxRows)
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, sqliteRefusal(ctx, err)
		}
		all = append(all, append([]any(nil), raw...))
	}
	if err := rows.Err(); err != nil {
		return nil, sqliteRefusal(ctx, err)
	}
	settleTypes(res.Columns, types, all, booleans)
	for _, r := range all {
		res.Rows = append(res.Rows, values(res.Columns, r))
	}
	return res, nil
}

// sqliteRefusal reports a statement SQLite could not run as not supported:
// a construct the translation does not cover, or a relation or column the
// catalog does not model.
func sqliteRefusal(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return pgerror.Errorf(pgerror.QueryCanceled, "canceling catalog statement due to statement timeout")
	}
	msg := err.Error()
	if i := strings.Index(msg, ": "); i >= 0 && strings.Contains(msg, "SQL logic error") {
		msg = msg[i+2:]
	}
	return unsupported(msg)
}

// wireType maps a catalog column's declared type to its wire type.
func wireType(decl string) WireType {
	decl = strings.ToUpper(decl)
	switch {
	case decl == "BOOL":
		return WireBool
	case strings.HasPrefix(decl, "ARRAY"):
		return WireTextArray
	case strings.Contains(decl, "INT"):
		return WireInt8
	case strings.Contains(decl, "FLOAT"):
		return WireFloat8
	}
	return WireText
}

// settleTypes types the columns computed by expressions (no declared type)
// from their values: integer or real when every value is, else text. A
// declared column whose values do not fit its type is sent as text.
func settleTypes(cols []OutputColumn, types []*sql.ColumnType, rows [][]any, booleans map[int]bool) {
	for i, t := range types {
		kind := cols[i].Type
		if t.DatabaseTypeName() == "" && booleans[i] && boolValues(rows, i) {
			cols[i].Type = WireBool
			continue
		}
		if t.DatabaseTypeName() == "" {
			// An expression named like a catalog column (attnotnull in
			// JDBC's a.attnotnull OR ...) has that column's type.
			if decl, ok := declaredTypes()[strings.ToLower(t.Name())]; ok {
				kind = wireType(decl)
			} else if len(rows) == 0 {
				kind = WireText
			} else {
				kind = WireInt8
			}
		}
		if array, ok := arrayKind(rows, i); ok && (kind == WireText || kind == WireTextArray || kind == WireInt8) {
			cols[i].Type = array
			continue
		}
		for _, r := range rows {
			switch r[i].(type) {
			case nil, int64:
			case float64:
				if kind == WireInt8 {
					kind = WireFloat8
				}
			default:
				if kind != WireTextArray {
					kind = WireText
				}
			}
		}
		cols[i].Type = kind
	}
}

// boolValues says whether every value of column i is NULL, 0 or 1.
func boolValues(rows [][]any, i int) bool {
	for _, r := range rows {
		if n, ok := r[i].(int64); r[i] != nil && (!ok || n != 0 && n != 1) {
			return false
		}
	}
	return true
}

func values(cols []OutputColumn, row []any) []Value {
	out := make([]Value, len(row))
	for i, v := range row {
		if v == nil {
			out[i].Null = true
			continue
		}
		switch cols[i].Type {
		case WireBool:
			n, _ := v.(int64)
			out[i].Bool = n != 0
		case WireInt8:
			out[i].Int, _ = v.(int64)
		case WireFloat8:
			switch n := v.(type) {
			case int64:
				out[i].Float = float64(n)
			case float64:
				out[i].Float = n
			}
		case WireTextArray, WireInt8Array:
			out[i].Text = arrayLiteral(v, cols[i].Type)
		default:
			out[i].Text = text(v)
		}
	}
	return out
}

func text(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}

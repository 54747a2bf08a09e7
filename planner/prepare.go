package planner

import (
	"errors"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/xwb1989/sqlparser"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
	"countwall/pgtypes"
)

// Prepared is a statement read once: its text lexed and parsed, and kept in
// that form so that each execution binds its $n arguments (Bind) without
// reading the text again, as PostgreSQL keeps a prepared statement's parse
// tree. It is bound to the catalog it was read against; a caller whose
// catalog has changed prepares the text again.
//
// Errors are kept rather than returned, each at the stage that met it, so
// that Bind refuses a statement exactly as reading its text with the
// arguments would (Parse): the text's size and encoding, then the
// arguments' encoding, then the tokens, then a $n without an argument, then
// the parse and the reading of the tree.
type Prepared struct {
	cat     *ir.Catalog
	ownText bool // parse the statement's own text, not its shape's tree (tests)

	declared []pgtypes.OID // the types the client declared for $1..$n (Declare)

	early   error        // the text's size or encoding
	explain bool         // EXPLAIN of the statement read
	tokErr  error        // met reading the tokens
	stmt    ir.Statement // decided from the tokens alone: SET, SHOW, BEGIN, ...
	execute []executeArg // an EXECUTE's arguments, as written (ExecuteArgs)
	params  []int        // the N of each $n token, in the text's order
	treeErr error        // met rendering or parsing the text
	tree    tree
}

// tree is a parsed statement: its own parse tree, or a shared shape's tree
// with this statement's constants to fill its value arguments.
type tree struct {
	own       sqlparser.Statement
	shape     *shape
	constants []sqlparser.SQLVal
}

// errUnparsable is a panic met in the SQL parser, which is not hardened
// against every input; for the analyst it is a syntax error.
var errUnparsable = pgerror.Errorf(pgerror.SyntaxError, "could not parse the statement")

// Prepare reads sql once against the catalog. It never fails: a statement
// that cannot run is refused by Bind and Describe.
func Prepare(sql string, cat *ir.Catalog) *Prepared {
	return prepare(sql, cat, false, nil)
}

// PrepareLexed is Prepare calling lexed with the statement's tokens, as
// pglex.Lex reads them, when they lex without error: a caller that needs
// the tokens too (the Engine's classification of a statement, the audit's
// statement shape) then lexes nothing itself. When lexed returns false the
// statement is its caller's to answer (schema discovery) and is not read
// further: its Bind and Describe refuse it. lexed must not keep the slice,
// which the next statement reuses.
func PrepareLexed(sql string, cat *ir.Catalog, lexed func([]pglex.Token) bool) *Prepared {
	return prepare(sql, cat, false, lexed)
}

// errAnsweredElsewhere is the Bind of a statement its caller took
// (PrepareLexed): a bug in the caller, never the analyst's doing.
var errAnsweredElsewhere = pgerror.Internal(errors.New("planner: a statement its caller answers was bound"))

func prepare(sql string, cat *ir.Catalog, ownText bool, lexed func([]pglex.Token) bool) *Prepared {
	pr := &Prepared{cat: cat, ownText: ownText}
	if limit := (&parser{cat: cat}).maxBytes(); len(sql) > limit {
		pr.early = pgerror.Errorf(pgerror.ProgramLimitExceeded, "statement is %d bytes, over the limit of %d", len(sql), limit)
		return pr
	}
	if !utf8.ValidString(sql) {
		pr.early = errInvalidUTF8
		return pr
	}
	buf := tokenBufs.Get().(*[]pglex.Token)
	defer putTokens(buf)
	toks := pr.readTokens(sql, buf, lexed)
	if pr.tokErr != nil || pr.stmt != nil {
		return pr
	}
	for _, t := range toks {
		if t.Kind == pglex.Param {
			pr.params = append(pr.params, t.N)
		}
	}
	pr.parse(toks)
	return pr
}

// tokenBufs hold token slices for Prepare: a statement's tokens are not
// kept once it is read (the parse tree and the IR hold strings, never the
// tokens), so each statement of a stream lexes into a slice used before.
var tokenBufs = sync.Pool{New: func() any { return new([]pglex.Token) }}

// maxPooledTokens bounds the slices kept: one long statement does not pin
// its tokens' memory for every later short one.
const maxPooledTokens = 4096

func putTokens(buf *[]pglex.Token) {
	if cap(*buf) > maxPooledTokens {
		return
	}
	clear((*buf)[:cap(*buf)]) // keep no statement's text alive
	*buf = (*buf)[:0]
	tokenBufs.Put(buf)
}

// readTokens lexes sql into *buf (kept there for the next statement) and
// decides what the tokens alone decide; the statement's tokens are returned
// when it needs the parser.
func (pr *Prepared) readTokens(sql string, buf *[]pglex.Token, lexed func([]pglex.Token) bool) (toks []pglex.Token) {
	defer func() {
		if r := recover(); r != nil {
			toks, pr.stmt, pr.tokErr = nil, nil, errUnparsable
		}
	}()
	if cap(*buf) == 0 {
		*buf = make([]pglex.Token, 0, len(sql)/3+8) // as Lex sizes it
	}
	toks, err := pglex.LexAppend((*buf)[:0], sql)
	if toks != nil {
		*buf = toks
	}
	if err == nil && lexed != nil && !lexed(toks) {
		pr.tokErr = errAnsweredElsewhere
		return nil
	}
	if err == nil {
		pr.explain, toks, err = explained(toks)
	}
	if err == nil {
		toks, err = splitStatements(toks)
	}
	if err != nil {
		pr.tokErr = err
		return nil
	}
	if len(toks) > 0 && isWord(toks[0], "execute") {
		ex, args, err := readExecute(toks)
		if err != nil {
			pr.tokErr = err
		} else {
			pr.stmt, pr.execute = ex, args
		}
		return nil
	}
	pr.stmt, pr.tokErr = fromTokens(toks)
	if pr.stmt == nil && pr.tokErr == nil {
		toks, pr.tokErr = rewriteForms(toks)
	}
	return toks
}

// parse parses the statement's text, through its shape when it has one.
func (pr *Prepared) parse(toks []pglex.Token) {
	defer func() {
		if r := recover(); r != nil {
			pr.tree, pr.treeErr = tree{}, errUnparsable
		}
	}()
	if !pr.ownText {
		if sh, constants, ok := shapeOf(toks); ok {
			pr.tree = tree{shape: sh, constants: constants}
			return
		}
	}
	text, err := render(toks)
	if err != nil {
		pr.treeErr = err
		return
	}
	ast, perr := sqlparser.Parse(text.text)
	if perr != nil {
		pr.treeErr = text.syntaxError(perr)
		return
	}
	pr.tree = tree{own: ast}
}

// Declare sets the types a client declared for $1..$n in the extended
// protocol's Parse message (Unspecified, or Unknown, for a type the server
// infers from the parameter's use), before the statement is described or
// bound. A parameter is then read by its declared type's input function
// and compared as PostgreSQL compares that type with the column, or
// refused where PostgreSQL has no such comparison.
func (pr *Prepared) Declare(types []pgtypes.OID) {
	pr.declared = types
}

// Bind reads the prepared statement with args, the values bound to $1..$n
// (nil elements are SQL NULL); each becomes a typed literal in the IR, never
// text pasted into SQL.
func (pr *Prepared) Bind(args []*string) (ir.Statement, error) {
	st, _, err := pr.BindTypes(args)
	return st, err
}

// BindTypes is Bind, also saying the type each parameter $1..$n was read
// as (declared, or given by its use): nil for a statement without any.
func (pr *Prepared) BindTypes(args []*string) (ir.Statement, []pgtypes.OID, error) {
	return pr.bindWith(&parser{cat: pr.cat, args: args, bind: true, declared: pr.declared})
}

// bindWith is BindTypes with p, a parser holding the arguments.
func (pr *Prepared) bindWith(p *parser) (ir.Statement, []pgtypes.OID, error) {
	st, err := pr.read(p)
	var types []pgtypes.OID
	if err == nil && len(pr.params) > 0 {
		types, err = p.paramTypesFor(pr.paramCount())
	}
	if err != nil && len(pr.params) > 0 {
		// PostgreSQL refuses at Parse what the text and the declared types
		// refuse, before Bind reads any argument: that error comes first.
		if _, _, perr := pr.Describe(); perr != nil {
			return nil, nil, perr
		}
	}
	return st, types, err
}

// paramCount is how many parameters the statement takes: as many as the
// client declared, or up to the highest $n, whichever is more.
func (pr *Prepared) paramCount() int {
	n := len(pr.declared)
	for _, i := range pr.params {
		n = max(n, i)
	}
	return n
}

// Describe returns, before the arguments are known, the type of each
// parameter (as declared, or as its first use gives it) and the statement
// read with a placeholder of its type for each (its shape: table, GROUP BY
// columns, alias), or the error that refuses the statement whatever its
// arguments.
func (pr *Prepared) Describe() ([]pgtypes.OID, ir.Statement, error) {
	p := &parser{cat: pr.cat, declared: pr.declared}
	st, err := pr.read(p)
	if err != nil {
		return nil, nil, err
	}
	types, err := p.paramTypesFor(pr.paramCount())
	if err != nil {
		return nil, nil, err
	}
	return types, st, nil
}

// paramTypesFor is the type of each of n parameters once the statement has
// been read: as declared, or as its first use gave it; a parameter with
// neither is refused, as PostgreSQL refuses it (42P18).
func (p *parser) paramTypesFor(n int) ([]pgtypes.OID, error) {
	types := make([]pgtypes.OID, n)
	for i := range types {
		switch {
		case i < len(p.declared) && !p.declared[i].Inferred():
			types[i] = p.declared[i]
		case i < len(p.paramTypes) && p.paramTypes[i] != pgtypes.Unspecified:
			types[i] = p.paramTypes[i]
		default:
			return nil, pgerror.Errorf(pgerror.IndeterminateDatatype, "could not determine data type of parameter $%d: it is not compared with a column, and no type was declared for it", i+1)
		}
	}
	return types, nil
}

// read reads the prepared statement with p's arguments (or, unbound, with
// p collecting the parameters' types), refusing it at the first stage that
// refuses it.
func (pr *Prepared) read(p *parser) (st ir.Statement, err error) {
	if pr.early != nil {
		return nil, pr.early
	}
	for _, a := range p.args {
		// PostgreSQL checks a parameter's bytes as UTF-8, where a zero byte
		// is invalid too, before its type's input function reads it.
		if a != nil && (!utf8.ValidString(*a) || strings.IndexByte(*a, 0) >= 0) {
			return nil, errInvalidUTF8
		}
	}
	if pr.tokErr != nil {
		return nil, pr.tokErr
	}
	if pr.stmt != nil {
		return pr.explainable(pr.stmt)
	}
	if p.bind {
		for _, n := range pr.params {
			if n > len(p.args) {
				return nil, pgerror.Errorf(pgerror.InvalidParameterValue, "parameter $%d has no bound value (%d given)", n, len(p.args))
			}
		}
	}
	if pr.treeErr != nil {
		return nil, pr.treeErr
	}
	defer func() {
		if r := recover(); r != nil {
			st, err = nil, errUnparsable
		}
	}()
	if st, err = pr.tree.read(p); err != nil {
		return nil, err
	}
	return pr.explainable(st)
}

// read reads the tree into a statement with p.
func (t tree) read(p *parser) (ir.Statement, error) {
	if t.shape == nil {
		return p.fromTree(t.own)
	}
	return t.shape.read(p, t.constants)
}

// CursorOp is the FETCH, MOVE, CLOSE or EXECUTE the statement is, which
// the front end answers from what it keeps; false for any other.
func (pr *Prepared) CursorOp() (ir.Chatter, bool) {
	if pr.early != nil || pr.tokErr != nil || pr.explain {
		return ir.Chatter{}, false
	}
	if c, ok := pr.stmt.(*ir.Chatter); ok && (c.Kind == ir.ChatterFetch || c.Kind == ir.ChatterMove || c.Kind == ir.ChatterClose || c.Kind == ir.ChatterExecute) {
		return *c, true
	}
	return ir.Chatter{}, false
}

// Deallocates is the prepared statement a DEALLOCATE drops ("" for ALL);
// false for any other statement.
func (pr *Prepared) Deallocates() (name string, ok bool) {
	if pr.early != nil || pr.tokErr != nil || pr.explain {
		return "", false
	}
	if c, isChatter := pr.stmt.(*ir.Chatter); isChatter && c.Kind == ir.ChatterDeallocate {
		return c.Value, true
	}
	return "", false
}

// ChangesSettings reports whether the statement is SET, RESET or DISCARD,
// which a rolled-back transaction undoes.
func (pr *Prepared) ChangesSettings() bool {
	if pr.early != nil || pr.tokErr != nil || pr.explain {
		return false
	}
	switch s := pr.stmt.(type) {
	case *ir.Set:
		return true
	case *ir.Chatter:
		return s.Kind == ir.ChatterDiscard
	}
	return false
}

// SetsLocal is the setting a SET LOCAL names; false for any other
// statement.
func (pr *Prepared) SetsLocal() (string, bool) {
	if pr.early != nil || pr.tokErr != nil || pr.explain {
		return "", false
	}
	if s, ok := pr.stmt.(*ir.Set); ok && s.Local {
		return s.Name, true
	}
	return "", false
}

// IsShow reports whether the statement is SHOW.
func (pr *Prepared) IsShow() bool {
	if pr.early != nil || pr.tokErr != nil || pr.explain {
		return false
	}
	_, ok := pr.stmt.(*ir.Show)
	return ok
}

// DiscardsAll reports whether the statement is DISCARD ALL, which drops
// the session's prepared statements and cursors besides its settings.
func (pr *Prepared) DiscardsAll() bool {
	if pr.early != nil || pr.tokErr != nil || pr.explain {
		return false
	}
	c, ok := pr.stmt.(*ir.Chatter)
	return ok && c.Kind == ir.ChatterDiscard && c.Value == "all"
}

// Control is the transaction control the statement is (ChatterBegin,
// ChatterCommit, ChatterRollback or a savepoint's), known without binding it; "" for any
// other statement, for one that is refused, and for an EXPLAIN.
func (pr *Prepared) Control() ir.ChatterKind {
	if pr.early != nil || pr.tokErr != nil || pr.explain {
		return ""
	}
	if c, ok := pr.stmt.(*ir.Chatter); ok {
		switch c.Kind {
		case ir.ChatterBegin, ir.ChatterCommit, ir.ChatterRollback, ir.ChatterSavepoint, ir.ChatterRelease, ir.ChatterRollbackTo:
			return c.Kind
		}
	}
	return ""
}

// Savepoint is the savepoint a SAVEPOINT, RELEASE or ROLLBACK TO names.
func (pr *Prepared) Savepoint() string {
	if c, ok := pr.stmt.(*ir.Chatter); ok && pr.Control() != "" {
		return c.Value
	}
	return ""
}

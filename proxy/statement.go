package proxy

import (
	"context"

	"countwall/ir"
	"countwall/pglex"
	"countwall/pgtypes"
	"countwall/planner"
	"countwall/proxy/catalog"
)

// Statement is a statement the Engine has read once (Session.Prepare): its
// keyed fingerprint, what it does to a transaction block, and its parsed
// form, which Execute binds to each execution's arguments without reading
// the text again. A front end keeps it for the extended protocol's prepared
// statements and portals. A Statement is used by one connection at a time.
type Statement struct {
	// SQL is the statement's text: it is read again only when a reload
	// has changed the catalog since it was prepared.
	SQL string
	// Transaction is what the statement does to a transaction block,
	// known before it runs.
	Transaction TxOp
	// Savepoint is the name a SAVEPOINT, RELEASE or ROLLBACK TO gives.
	Savepoint string
	// Deallocate is set for DEALLOCATE: the front end that holds the
	// session's prepared statements drops the one it names (every one for
	// ALL) once the statement has run.
	Deallocate *Deallocation
	// Copy is set for COPY (query) TO STDOUT: the statement is the query,
	// answered (and charged, and audited) as itself, and the front end
	// writes its answer in COPY's format.
	Copy *ir.CopyOut

	// Cursor is set for DECLARE name CURSOR FOR query: the statement is
	// the query, answered (charged, audited) as itself when the cursor is
	// declared; the front end keeps the answer for FETCH.
	Cursor *CursorDeclaration
	// CursorOp is set for FETCH, MOVE and CLOSE, which the front end
	// answers from the cursors it keeps.
	CursorOp *ir.Chatter

	// DiscardAll is set for DISCARD ALL: the front end drops the
	// session's prepared statements and cursors once it has run (the
	// Engine resets the settings), and refuses it inside a block.
	DiscardAll bool
	// ChangesSettings is set for SET, RESET and DISCARD: the front end
	// saves the settings before one runs in an implicit transaction, to
	// undo it if the transaction fails.
	ChangesSettings bool
	// Show is set for SHOW, which PREPARE does not take.
	Show bool
	// LocalSetting is the setting a SET LOCAL names: the front end undoes
	// it when the transaction ends, and ignores it (with a warning)
	// outside a block, as PostgreSQL does.
	LocalSetting string

	// PrepareName is set for PREPARE name AS query: the statement is the
	// query, which the front end keeps under the name for EXECUTE, as it
	// keeps a statement the protocol's Parse prepared.
	PrepareName string

	// text is what was read: SQL, or a COPY's or a DECLARE's query.
	text string

	fingerprint string
	prepared    *planner.Prepared
	catalog     *ir.Catalog // the catalog prepared was read against
	// reading is what the statement is, decided once when it was read.
	reading reading
	// shape is what the audit keeps of the statement when it is answered.
	shape preparedShape
	// declared are the parameter types the client declared (DeclareParams).
	declared []pgtypes.OID
}

// DeclareParams sets the types a client declared for the statement's
// parameters $1..$n, as the extended protocol's Parse message carries them
// (0 where the client leaves the type to the server), before Describe and
// Execute: each parameter is then read and compared as PostgreSQL reads
// and compares a value of its declared type, or refused where PostgreSQL
// has no such comparison.
func (st *Statement) DeclareParams(types []pgtypes.OID) {
	if st.PrepareName != "" {
		return // its query's types are the ones PREPARE declares
	}
	st.declared = types
	if st.prepared != nil {
		st.prepared.Declare(types)
	}
}

// reading is what a statement is, as Prepare decides it once from the
// tokens it lexes once: who answers it, and how.
type reading int

const (
	// readStatement is a statement the planner reads: a COUNT query, SET,
	// SHOW, transaction control or other client chatter, or one it refuses.
	readStatement reading = iota
	// readExplain is EXPLAIN of one: priced and described, never run.
	readExplain
	// readCatalog is schema discovery (pg_catalog, information_schema),
	// answered from the config's public metadata by proxy/catalog and
	// never by the planner.
	readCatalog
)

// bind fills the statement's parameters and says the type each was read
// as.
func (st *Statement) bind(args []*string) (ir.Statement, []pgtypes.OID, error) {
	return st.prepared.BindTypes(args)
}

// ExecuteArgs are the arguments the EXECUTE the statement is gives the
// prepared statement name, whose parameters have the given types: in text
// form for its run (nil: NULL), each cast to its parameter's type as
// PostgreSQL casts an EXECUTE's arguments.
func (st *Statement) ExecuteArgs(name string, types []pgtypes.OID) ([]*string, error) {
	args, err := st.prepared.ExecuteArgs(name, types)
	return args, publicError(err)
}

// read reads the statement against cat: its text is lexed once, and its
// tokens decide what it is (schema discovery, else the planner's; EXPLAIN
// or transaction control among those) and give the audit its shape.
func (st *Statement) read(cat *ir.Catalog) {
	st.reading, st.shape = readStatement, preparedShape{}
	text := st.SQL
	st.Copy, st.Cursor, st.PrepareName = nil, nil, ""
	if o, ok := planner.ReadOuter(st.SQL); ok {
		text = o.Query
		switch {
		case o.Copy != nil:
			st.Copy = o.Copy
		case o.Cursor != "":
			st.Cursor = &CursorDeclaration{Name: o.Cursor, Hold: o.Hold}
		default:
			// PREPARE's own list types its query's parameters; a Parse
			// message's types, if any, were the PREPARE's, which has none.
			st.PrepareName, st.declared = o.Prepare, o.Types
		}
	}
	st.text = text
	lexed := false
	classify := func(toks []pglex.Token) bool {
		lexed = true
		if catalog.Handles(toks) {
			st.reading = readCatalog
			return false
		}
		st.shape = shapeOf(toks)
		return true
	}
	st.prepared, st.catalog = planner.PrepareLexed(text, cat, classify), cat
	if !lexed && catalog.HandlesText(text) {
		// The planner did not lex it (over its size limit), or its lexer
		// refused it (an escape string E'...', which psql's \l sends): the
		// catalog reads a discovery statement by its own rules.
		st.reading = readCatalog
	}
	if st.prepared.Explained() {
		st.reading, st.shape = readExplain, preparedShape{} // an EXPLAIN is never released
	}
	st.prepared.Declare(st.declared)
	st.Transaction, st.Savepoint = txOp(st.prepared), st.prepared.Savepoint()
	st.Deallocate, st.CursorOp = nil, nil
	if op, ok := st.prepared.CursorOp(); ok {
		st.CursorOp = &op
	}
	st.DiscardAll, st.ChangesSettings, st.Show = st.prepared.DiscardsAll(), st.prepared.ChangesSettings(), st.prepared.IsShow()
	st.LocalSetting, _ = st.prepared.SetsLocal()
	if name, ok := st.prepared.Deallocates(); ok {
		st.Deallocate = &Deallocation{Name: name, All: name == ""}
	}
}

// CursorDeclaration is a DECLARE's cursor: its name, and whether it is
// held past the transaction that declared it (WITH HOLD).
type CursorDeclaration struct {
	Name string
	Hold bool
}

// Deallocation is what a DEALLOCATE drops: the prepared statement Name,
// or every named one when All.
type Deallocation struct {
	Name string
	All  bool
}

// Fingerprint is the statement's keyed fingerprint, computed once when it
// was prepared: the audit log, the ledger and the logs name it so.
func (st *Statement) Fingerprint() string { return st.fingerprint }

// TxOp is what a statement does to the session's transaction block.
// countwall never writes, so a block changes no answer; a front end keeps
// its state so that clients see PostgreSQL's behaviour (proxy/pgwire).
type TxOp int

const (
	TxNone       TxOp = iota // not transaction control
	TxBegin                  // BEGIN, START TRANSACTION
	TxCommit                 // COMMIT, END
	TxRollback               // ROLLBACK, ABORT
	TxSavepoint              // SAVEPOINT name
	TxRelease                // RELEASE [SAVEPOINT] name
	TxRollbackTo             // ROLLBACK TO [SAVEPOINT] name
)

// Ends reports whether the operation ends a transaction block: COMMIT and
// ROLLBACK, the only statements PostgreSQL runs in a failed block.
func (op TxOp) Ends() bool { return op == TxCommit || op == TxRollback }

func txOp(pr *planner.Prepared) TxOp {
	switch pr.Control() {
	case ir.ChatterBegin:
		return TxBegin
	case ir.ChatterCommit:
		return TxCommit
	case ir.ChatterRollback:
		return TxRollback
	case ir.ChatterSavepoint:
		return TxSavepoint
	case ir.ChatterRelease:
		return TxRelease
	case ir.ChatterRollbackTo:
		return TxRollbackTo
	}
	return TxNone
}

// Prepare reads a statement once: its fingerprint is computed and its text
// lexed and parsed here, and never again. It refuses nothing itself: a
// statement that cannot run is refused by Describe or Execute.
func (s *Session) Prepare(sql string) *Statement {
	return s.engine.prepare(sql, s.engine.live.Load().catalog)
}

func (e *Engine) prepare(sql string, cat *ir.Catalog) *Statement {
	st := &Statement{SQL: sql, fingerprint: e.Fingerprint(sql)}
	st.read(cat)
	return st
}

// current makes st current for the catalog in force: a statement prepared
// before a reload (or made by someone other than the Engine) is read again,
// so that the policy it is held to is always the live one.
func (e *Engine) current(st *Statement, rt *runtime) {
	if st.prepared != nil && st.catalog == rt.catalog {
		return
	}
	if st.fingerprint == "" {
		st.fingerprint = e.Fingerprint(st.SQL)
	}
	st.read(rt.catalog)
}

// Description is what a statement will return, known before it runs: the
// PostgreSQL type of each bound parameter $1..$n (as the client declared
// it, or as its use gives it) and the output columns (nil for statements
// that return no rows, such as SET).
type Description struct {
	Params  []pgtypes.OID
	Columns []Column
}

// Describe validates a prepared statement without running it and says what
// it returns.
func (s *Session) Describe(ctx context.Context, st *Statement) (*Description, error) {
	select {
	case <-s.ended:
		return nil, errTerminated
	default:
	}
	rt := s.engine.live.Load()
	s.engine.current(st, rt)
	if st.reading == readCatalog {
		return s.describeCatalog(ctx, st.text)
	}
	params, shape, err := st.prepared.Describe()
	if err != nil {
		return nil, publicError(err)
	}
	d := &Description{Params: params}
	switch sh := shape.(type) {
	case *ir.Query:
		if sh.HasSums() {
			d.Columns = append(queryColumns(rt, sh), s.sumIntervalColumns(rt, sh)...)
			break
		}
		d.Columns = s.withIntervalColumns(queryColumns(rt, sh))
		d.Columns = selectOrder(d.Columns, len(sh.GroupBy), sh.GroupsAfterCount)
	case *ir.Show:
		d.Columns = showColumns(sh.Name)
	case *ir.Chatter:
		if sh.Kind == ir.ChatterVersion || sh.Kind == ir.ChatterCurrentSetting {
			d.Columns = []Column{{Name: string(sh.Kind), Type: ColumnText}}
		}
	}
	if st.reading == readExplain {
		d.Columns = []Column{planColumn}
	}
	return d, nil
}

// Batch is the statements of a simple-protocol Query string, cut at the
// semicolons that end them by the planner's lexer: the wire runs each in
// turn, preparing each as its own statement.
func Batch(sql string) []string { return planner.Batch(sql) }

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

	fingerprint string
	prepared    *planner.Prepared
	catalog     *ir.Catalog // the catalog prepared was read against
	// explain marks EXPLAIN SELECT ...: prepared holds the SELECT, which is
	// priced and described but never run. explainErr refuses an EXPLAIN
	// countwall does not answer (options, ANALYZE, no statement).
	explain    bool
	explainErr error
	// schema marks a schema-discovery statement (pg_catalog,
	// information_schema), answered from the config's public metadata by
	// proxy/catalog and never by the planner.
	schema bool
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
	st.declared = types
	if st.prepared != nil {
		st.prepared.Declare(types)
	}
}

// bind fills the statement's parameters, says the type each was read as,
// and whether the statement is explained.
func (st *Statement) bind(args []*string) (ir.Statement, []pgtypes.OID, bool, error) {
	if st.explainErr != nil {
		return nil, nil, true, st.explainErr
	}
	stmt, types, err := st.prepared.BindTypes(args)
	if err == nil && st.explain {
		err = explainable(stmt)
	}
	return stmt, types, st.explain, err
}

// read prepares sql against cat, an EXPLAIN's statement without the EXPLAIN.
func (st *Statement) read(cat *ir.Catalog) {
	st.schema = catalog.Handles(st.SQL)
	body, explain, err := explainedStatement(st.SQL)
	st.explain, st.explainErr = explain, err
	st.shape = preparedShape{}
	keepShape := func(toks []pglex.Token) {
		if !explain { // an EXPLAIN is never released; body is not its text
			st.shape = shapeOf(toks)
		}
	}
	st.prepared, st.catalog = planner.PrepareLexed(body, cat, keepShape), cat
	st.prepared.Declare(st.declared)
	st.Transaction = TxNone
	if !explain {
		st.Transaction = txOp(st.prepared)
	}
}

// Fingerprint is the statement's keyed fingerprint, computed once when it
// was prepared: the audit log, the ledger and the logs name it so.
func (st *Statement) Fingerprint() string { return st.fingerprint }

// TxOp is what a statement does to the session's transaction block.
// countwall never writes, so a block changes no answer; a front end keeps
// its state so that clients see PostgreSQL's behaviour (proxy/pgwire).
type TxOp int

const (
	TxNone     TxOp = iota // not transaction control
	TxBegin                // BEGIN, START TRANSACTION
	TxCommit               // COMMIT, END
	TxRollback             // ROLLBACK, ABORT
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

// EndsTransaction reports whether sql is COMMIT or ROLLBACK (or their
// spellings END and ABORT): the statements a front door still runs in a
// failed transaction block, as PostgreSQL does. It runs nothing and records
// nothing.
func (s *Session) EndsTransaction(sql string) bool {
	return txOp(planner.Prepare(sql, s.engine.live.Load().catalog)).Ends()
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
	if st.schema {
		return s.describeCatalog(ctx, st.SQL)
	}
	if st.explainErr != nil {
		return nil, publicError(st.explainErr)
	}
	params, shape, err := st.prepared.Describe()
	if err != nil {
		return nil, publicError(err)
	}
	d := &Description{Params: params}
	switch sh := shape.(type) {
	case *ir.Query:
		d.Columns = s.withIntervalColumns(queryColumns(rt, sh))
	case *ir.Show:
		d.Columns = showColumns(sh.Name)
	case *ir.Chatter:
		if sh.Kind == ir.ChatterVersion || sh.Kind == ir.ChatterCurrentSetting {
			d.Columns = []Column{{Name: string(sh.Kind), Type: ColumnText}}
		}
	}
	if d.Columns, err = describedColumns(st.explain, shape, d.Columns); err != nil {
		return nil, publicError(err)
	}
	return d, nil
}

func queryColumns(rt *runtime, q *ir.Query) []Column {
	cols := make([]Column, 0, len(q.GroupBy)+1)
	for _, g := range q.GroupBy {
		cols = append(cols, Column{Name: g, Type: ColumnText})
	}
	typ := ColumnInt8
	if rt.float {
		typ = ColumnFloat8
	}
	return append(cols, Column{Name: q.Alias, Type: typ})
}

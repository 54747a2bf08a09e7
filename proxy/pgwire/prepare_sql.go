package pgwire

import (
	"countwall/ir"
	"countwall/pgerror"
	"countwall/proxy"
)

// sqlPrepare keeps a PREPARE's query under its name, as Parse keeps a
// statement (the two share one namespace, as in PostgreSQL): it is read
// and described now, refused now if it cannot run, and runs at EXECUTE.
func (c *conn) sqlPrepare(st *proxy.Statement) bool {
	if err := c.keep(st.PrepareName, st, true); err != nil {
		c.refused(st, err)
		return false
	}
	c.be.Send(c.enc.commandComplete("PREPARE"))
	return true
}

// preparable refuses a PREPARE of what is not a query (a cursor
// statement, DEALLOCATE, EXECUTE, transaction control, SET, RESET, SHOW,
// DISCARD), which PostgreSQL's grammar does not prepare: an EXECUTE of a
// DISCARD ALL would otherwise run it past the checks of the front end.
func preparable(st *proxy.Statement) error {
	if st.CursorOp != nil || st.Deallocate != nil || st.Transaction != proxy.TxNone || st.ChangesSettings || st.Show {
		return pgerror.Errorf(pgerror.SyntaxError, "PREPARE takes a query: PREPARE name AS SELECT ...")
	}
	return nil
}

// sqlExecute runs a prepared statement with an EXECUTE's arguments: the
// statement's own run, audit and charge, answered as a query is.
func (c *conn) sqlExecute(st *proxy.Statement, ex *ir.Chatter) bool {
	res, ok := c.executeResult(st, ex)
	if ok {
		c.sendResult(res)
	}
	return ok
}

// executeResult runs the prepared statement an EXECUTE names with its
// arguments, cast to the types of the statement's parameters; false when
// it was refused or failed, which has been reported.
func (c *conn) executeResult(st *proxy.Statement, ex *ir.Chatter) (*proxy.Result, bool) {
	p, ok := c.statements[ex.Value]
	if !ok || ex.Value == "" {
		c.refused(st, pgerror.Errorf(pgerror.InvalidSQLStatementName, "prepared statement %q does not exist", ex.Value))
		return nil, false
	}
	if p.answersItself() || (!p.query && p.stmt.CursorOp != nil) {
		c.refused(st, pgerror.Errorf(pgerror.FeatureNotSupported, "EXECUTE runs a prepared query; prepared statement %q is a COPY, cursor or PREPARE statement: send it itself", ex.Value))
		return nil, false
	}
	args, err := st.ExecuteArgs(ex.Value, p.paramOIDs)
	if err != nil {
		c.refused(st, err)
		return nil, false
	}
	if err := c.unchangedColumns(p); err != nil {
		c.refused(p.stmt, err)
		return nil, false
	}
	res, err := c.run(p.stmt, args)
	if err != nil {
		c.sendError(err)
		return nil, false
	}
	return res, true
}

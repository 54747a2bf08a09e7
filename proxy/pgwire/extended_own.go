package pgwire

import (
	"strconv"

	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/proxy"
)

// The statements the front door answers itself (COPY, DECLARE, FETCH,
// MOVE, CLOSE, PREPARE, EXECUTE) in the extended protocol, as PostgreSQL
// answers them there: Parse, Bind and Describe see the statement, not its
// query (no rows for DECLARE, COPY or PREPARE; a FETCH describes its
// cursor's rows, an EXECUTE its statement's), and Execute answers as the
// simple protocol does. A query is run and charged once, when COPY,
// DECLARE or EXECUTE answers it; FETCH reads what DECLARE kept.

// answersItself reports whether the statement is a COPY, DECLARE or
// PREPARE around a query, as a Parse kept it.
func (p *prepared) answersItself() bool {
	st := p.stmt
	return !p.query && (st.Copy != nil || st.Cursor != nil || st.PrepareName != "")
}

// resultColumns are the columns a Describe of p answers and a Bind's
// result formats count, known when asked: a FETCH's are its cursor's (none
// while there is no such cursor), an EXECUTE's its statement's.
func (c *conn) resultColumns(p *prepared) []proxy.Column {
	op := p.stmt.CursorOp
	switch {
	case p.answersItself():
		return nil
	case p.query || op == nil:
		return p.desc.Columns
	case op.Kind == ir.ChatterFetch:
		if cur := c.cursors[op.Value]; cur != nil {
			return cur.res.Columns
		}
	case op.Kind == ir.ChatterExecute:
		if target := c.statements[op.Value]; target != nil && op.Value != "" && (target.query || !target.answersItself()) {
			return target.desc.Columns
		}
	}
	return nil
}

// portalExists reports whether name is a portal's or a cursor's: the two
// share one namespace, as in PostgreSQL.
func (c *conn) portalExists(name string) bool {
	_, portal := c.portals[name]
	_, cursor := c.cursors[name]
	return portal || cursor
}

// executeOwn is the first Execute of a portal of a statement the front
// door answers itself. A FETCH or an EXECUTE answers rows, which the
// portal keeps for a row limit as it keeps a query's; any other runs to
// completion, and a further Execute of its portal is refused (55000).
func (c *conn) executeOwn(p *portal, maxRows uint32) bool {
	st := p.stmt.stmt
	var ok bool
	switch op := st.CursorOp; {
	case op != nil && (op.Kind == ir.ChatterExecute || op.Kind == ir.ChatterFetch):
		var res *proxy.Result
		if op.Kind == ir.ChatterExecute {
			res, ok = c.executeResult(st, op)
		} else {
			res, ok = c.fetchResult(st, op)
		}
		if !ok {
			return false
		}
		p.ran = res
		return c.resume(p, maxRows)
	case st.PrepareName != "" && !p.stmt.query:
		ok = c.sqlPrepare(st)
	case st.Copy != nil && len(p.stmt.desc.Params) > 0:
		// COPY binds no parameters in PostgreSQL: its query is read when it runs.
		c.refused(st, pgerror.Errorf(pgerror.UndefinedParameter, "there is no parameter $1"))
		return false
	default:
		ok = c.runOwn(st, p.args)
	}
	p.ran, p.resumed = &proxy.Result{}, true
	return ok
}

// runOwn runs a COPY, a DECLARE, a MOVE or a CLOSE and answers it as the
// simple protocol does.
func (c *conn) runOwn(st *proxy.Statement, args []*string) bool {
	res, err := c.run(st, args)
	if err != nil {
		c.sendError(err)
		return false
	}
	if st.Copy != nil {
		return c.sendCopy(res, *st.Copy)
	}
	if c.cursorAnswer(st, res) {
		return true
	}
	c.sendRows(res, nil)
	return true
}

// fetchResult runs a FETCH (for its log and audit; it releases nothing
// new) and takes its rows from the cursor.
func (c *conn) fetchResult(st *proxy.Statement, op *ir.Chatter) (*proxy.Result, bool) {
	if _, err := c.run(st, nil); err != nil {
		c.sendError(err)
		return nil, false
	}
	return c.advance(op), true
}

// executeCursor is an Execute of a DECLAREd cursor by its name, as of a
// query's portal: its next rows (at most maxRows, 0: all) in text, then
// PortalSuspended when it sent maxRows, else SELECT n. Nothing runs: the
// rows are the answer DECLARE was charged for.
func (c *conn) executeCursor(cur *cursor, maxRows uint32) bool {
	if c.txStatus == txFailed {
		c.sendError(errInFailedBlock)
		return false
	}
	rows := cur.res.Rows[cur.sent:]
	if maxRows > 0 && uint32(len(rows)) > maxRows {
		rows = rows[:maxRows]
	}
	cur.sent += len(rows)
	for _, row := range rows {
		c.be.Send(c.enc.dataRow(cur.res.Columns, row, nil))
	}
	if maxRows > 0 && uint32(len(rows)) == maxRows {
		c.be.Send(&pgproto3.PortalSuspended{})
	} else {
		c.be.Send(c.enc.commandComplete("SELECT " + strconv.Itoa(len(rows))))
	}
	return true
}

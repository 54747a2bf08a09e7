package pgwire

import (
	"strconv"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/proxy"
)

// cursor is a DECLAREd cursor: the answer its query was given when it was
// declared (the one run, the one charge) and how far FETCH has read it.
type cursor struct {
	res  *proxy.Result
	sent int
	hold bool // WITH HOLD: it outlives the transaction that declared it
}

// checkCursor refuses, before it runs, what PostgreSQL refuses of a cursor
// statement: a DECLARE without HOLD outside a block (25P01) or of a name in
// use (42P03), a FETCH, MOVE or CLOSE of no cursor (34000).
func (c *conn) checkCursor(st *proxy.Statement) error {
	if d := st.Cursor; d != nil {
		if c.txStatus == txIdle && !c.implicitBlock && !d.Hold {
			return pgerror.Errorf(pgerror.NoActiveSQLTransaction, "DECLARE CURSOR can only be used in transaction blocks")
		}
		if c.portalExists(d.Name) {
			return pgerror.Errorf(pgerror.DuplicateCursor, "cursor %q already exists", d.Name)
		}
	}
	if op := st.CursorOp; op != nil && op.Kind != ir.ChatterExecute && op.Value != "" {
		if _, ok := c.cursors[op.Value]; !ok {
			return pgerror.Errorf(pgerror.InvalidCursorName, "cursor %q does not exist", op.Value)
		}
	}
	return nil
}

// cursorAnswer sends what a cursor statement that ran answers: a DECLARE
// keeps its query's answer, FETCH sends the next rows of it, MOVE skips
// them, CLOSE drops the cursor (every one for CLOSE ALL). false for a
// statement that is none of these.
func (c *conn) cursorAnswer(st *proxy.Statement, res *proxy.Result) bool {
	switch {
	case st.Cursor != nil:
		if len(res.Columns) == 0 {
			c.sendError(pgerror.Errorf(pgerror.FeatureNotSupported, "DECLARE CURSOR needs a query that returns rows"))
			return true
		}
		c.cursors[st.Cursor.Name] = &cursor{res: res, hold: st.Cursor.Hold}
		c.be.Send(c.enc.commandComplete("DECLARE CURSOR"))
		if res.Notice != "" {
			c.sendNotice(res.Notice)
		}
	case st.CursorOp != nil && st.CursorOp.Kind == ir.ChatterClose:
		if st.CursorOp.Value == "" {
			clear(c.cursors)
		} else {
			delete(c.cursors, st.CursorOp.Value)
		}
		c.be.Send(c.enc.commandComplete("CLOSE CURSOR"))
	case st.CursorOp != nil:
		res := c.advance(st.CursorOp)
		if len(res.Columns) > 0 {
			c.be.Send(c.enc.rowDescription(res.Columns, nil))
		}
		c.sendRows(res, nil)
	default:
		return false
	}
	return true
}

// advance moves a cursor on by a FETCH's or a MOVE's rows and says what it
// answers: the rows it passed (a FETCH's, with their columns) and its tag.
func (c *conn) advance(op *ir.Chatter) *proxy.Result {
	cur := c.cursors[op.Value]
	rows := cur.res.Rows[cur.sent:]
	if n := op.Rows; n >= 0 && int64(len(rows)) > n {
		rows = rows[:n]
	}
	cur.sent += len(rows)
	if op.Kind != ir.ChatterFetch {
		return &proxy.Result{Tag: "MOVE " + strconv.Itoa(len(rows))}
	}
	return &proxy.Result{Columns: cur.res.Columns, Rows: rows, Tag: "FETCH " + strconv.Itoa(len(rows))}
}

// closeCursorsAtEnd drops, when a transaction ends, the cursors it
// declared without HOLD, as PostgreSQL does.
func (c *conn) closeCursorsAtEnd() {
	for name, cur := range c.cursors {
		if !cur.hold {
			delete(c.cursors, name)
		}
	}
}

package pgwire

import (
	"slices"

	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/pgerror"
	"countwall/proxy"
)

// txState is the connection's transaction status, as ReadyForQuery
// reports it. countwall never writes, so a transaction block changes nothing
// about the answers; it is kept so that clients see PostgreSQL's behaviour:
// after an error inside BEGIN, every statement but COMMIT or ROLLBACK is
// refused with 25P02, which drivers and psql rely on to tell that their
// block failed.
type txState byte

const (
	txIdle   txState = 'I' // not in a transaction block
	txBlock  txState = 'T' // in a transaction block
	txFailed txState = 'E' // in a failed transaction block
)

var errInFailedBlock = pgerror.Errorf(pgerror.InFailedSQLTransaction,
	"current transaction is aborted, commands ignored until end of transaction block")

// refuseInFailedBlock returns 25P02 when the connection is in a failed
// transaction block and the statement does not end it.
func (c *conn) refuseInFailedBlock(st *proxy.Statement) error {
	if c.txStatus != txFailed || st.Transaction.Ends() || st.Transaction == proxy.TxRollbackTo {
		return nil
	}
	return errInFailedBlock
}

// checkSavepoint refuses, before it runs, a savepoint statement PostgreSQL
// refuses: outside a block (25P01), or naming no savepoint of the block
// (3B001).
func (c *conn) checkSavepoint(st *proxy.Statement) error {
	var what string
	switch st.Transaction {
	case proxy.TxSavepoint:
		what = "SAVEPOINT"
	case proxy.TxRelease:
		what = "RELEASE SAVEPOINT"
	case proxy.TxRollbackTo:
		what = "ROLLBACK TO SAVEPOINT"
	default:
		return nil
	}
	if c.txStatus == txIdle {
		return pgerror.Errorf(pgerror.NoActiveSQLTransaction, "%s can only be used in transaction blocks", what)
	}
	if st.Transaction != proxy.TxSavepoint && !slices.Contains(c.savepoints, st.Savepoint) {
		return pgerror.Errorf(pgerror.InvalidSavepoint, "savepoint %q does not exist", st.Savepoint)
	}
	return nil
}

// savepoint follows a savepoint statement that ran: SAVEPOINT adds one,
// RELEASE drops the latest of that name and those after it, ROLLBACK TO
// keeps it, drops those after it and ends the block's failure.
func (c *conn) savepoint(op proxy.TxOp, name string) {
	latest := -1
	for i, sp := range c.savepoints {
		if sp == name {
			latest = i
		}
	}
	switch op {
	case proxy.TxSavepoint:
		c.savepoints = append(c.savepoints, name)
		c.savepointSettings = append(c.savepointSettings, c.session.Settings())
	case proxy.TxRelease:
		c.savepoints = c.savepoints[:latest]
		c.savepointSettings = c.savepointSettings[:latest]
	case proxy.TxRollbackTo:
		c.savepoints = c.savepoints[:latest+1]
		c.savepointSettings = c.savepointSettings[:latest+1]
		c.session.RestoreSettings(c.savepointSettings[latest])
		c.txStatus = txBlock
	}
}

// beginSettings notes the settings a transaction starts with.
func (c *conn) beginSettings() {
	saved := c.session.Settings()
	c.txSettings = &saved
}

// rollbackSettings undoes the settings changed in the transaction ending.
func (c *conn) rollbackSettings() {
	if c.txSettings != nil {
		c.session.RestoreSettings(*c.txSettings)
	}
	c.txSettings = nil
	c.localSettings = nil // undone with the rest
}

// transactionControl follows BEGIN, COMMIT and ROLLBACK as PostgreSQL does,
// warning where it warns, and returns the result to send.
func (c *conn) transactionControl(op proxy.TxOp, name string, res *proxy.Result) *proxy.Result {
	switch {
	case op == proxy.TxBegin:
		if c.txStatus != txIdle {
			c.warn(pgerror.ActiveSQLTransaction, "there is already a transaction in progress")
		}
		if c.txStatus == txIdle && c.txSettings == nil {
			c.beginSettings()
		}
		if c.txStatus == txIdle {
			c.savepoints, c.savepointSettings = nil, nil
		}
		c.txStatus = txBlock
	case op == proxy.TxSavepoint, op == proxy.TxRelease, op == proxy.TxRollbackTo:
		c.savepoint(op, name)
	case op.Ends():
		switch c.txStatus {
		case txIdle:
			c.warn(pgerror.NoActiveSQLTransaction, "there is no transaction in progress")
		case txFailed:
			// COMMIT of a failed block rolls it back, and says so.
			rolledBack := *res
			rolledBack.Tag = "ROLLBACK"
			res = &rolledBack
		}
		if res.Tag == "ROLLBACK" {
			c.rollbackSettings()
		}
		c.revertLocal()
		c.txSettings = nil
		c.txStatus = txIdle
		c.savepoints, c.savepointSettings = nil, nil
		c.closeCursorsAtEnd()
		clear(c.portals) // as PostgreSQL drops them at the block's end
	}
	return res
}

// endImplicitTransaction runs at Sync: outside a transaction block the
// extended protocol's implicit transaction ends there, and PostgreSQL drops
// every portal with it.
func (c *conn) endImplicitTransaction() {
	if c.txStatus == txIdle {
		clear(c.portals)
		c.txSettings = nil // committed
	}
}

// saveSettingsForImplicit saves the settings before a SET, RESET or
// DISCARD runs in the extended protocol outside a block: the statements
// up to Sync are one implicit transaction, whose failure undoes it.
func (c *conn) saveSettingsForImplicit(st *proxy.Statement) {
	if st.ChangesSettings && c.txStatus == txIdle && c.txSettings == nil {
		c.beginSettings()
	}
}

func (c *conn) warn(code pgerror.Code, msg string) {
	c.be.Send(&pgproto3.NoticeResponse{Severity: "WARNING", SeverityUnlocalized: "WARNING", Code: string(code), Message: msg})
}

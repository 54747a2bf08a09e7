package pgwire

import (
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
	if c.txStatus != txFailed || st.Transaction.Ends() {
		return nil
	}
	return errInFailedBlock
}

// transactionControl follows BEGIN, COMMIT and ROLLBACK as PostgreSQL does,
// warning where it warns, and returns the result to send.
func (c *conn) transactionControl(op proxy.TxOp, res *proxy.Result) *proxy.Result {
	switch {
	case op == proxy.TxBegin:
		if c.txStatus != txIdle {
			c.warn(pgerror.ActiveSQLTransaction, "there is already a transaction in progress")
		}
		c.txStatus = txBlock
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
		c.txStatus = txIdle
	}
	return res
}

// endImplicitTransaction runs at Sync: outside a transaction block the
// extended protocol's implicit transaction ends there, and PostgreSQL drops
// every portal with it.
func (c *conn) endImplicitTransaction() {
	if c.txStatus == txIdle {
		clear(c.portals)
	}
}

func (c *conn) warn(code pgerror.Code, msg string) {
	c.be.Send(&pgproto3.NoticeResponse{Severity: "WARNING", SeverityUnlocalized: "WARNING", Code: string(code), Message: msg})
}

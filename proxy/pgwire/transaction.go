package pgwire

import (
	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/pgerror"
	"countwall/proxy"
)

// Transaction status, as ReadyForQuery reports it. countwall never writes,
// so a transaction block changes nothing about the answers; it is kept so
// that clients see PostgreSQL's behaviour: after an error inside BEGIN,
// every statement but COMMIT or ROLLBACK is refused with 25P02, which
// drivers and psql rely on to tell that their block failed.
const (
	txIdle   = 'I' // not in a transaction block
	txBlock  = 'T' // in a transaction block
	txFailed = 'E' // in a failed transaction block
)

var errInFailedBlock = pgerror.Errorf(pgerror.InFailedSQLTransaction,
	"current transaction is aborted, commands ignored until end of transaction block")

// refuseInFailedBlock returns 25P02 when the connection is in a failed
// transaction block and the statement does not end it. sql is only asked
// for (and only then parsed) in a failed block.
func (c *conn) refuseInFailedBlock(sql func() string) error {
	if c.txStatus != txFailed || c.session.EndsTransaction(sql()) {
		return nil
	}
	return errInFailedBlock
}

// transactionControl follows BEGIN, COMMIT and ROLLBACK as PostgreSQL does,
// warning where it warns, and returns the result to send.
func (c *conn) transactionControl(res *proxy.Result) *proxy.Result {
	switch res.Tag {
	case "BEGIN":
		if c.txStatus != txIdle {
			c.warn(pgerror.ActiveSQLTransaction, "there is already a transaction in progress")
		}
		c.txStatus = txBlock
	case "COMMIT", "ROLLBACK":
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

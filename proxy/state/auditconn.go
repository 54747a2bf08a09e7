package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// auditConn is the SQLite audit writer's own connection, held for the
// state database's life, with BEGIN IMMEDIATE, COMMIT and ROLLBACK and the
// writer's statements prepared on it once: a commit parses no SQL and
// makes no statement object, where a database/sql transaction parses its
// BEGIN and COMMIT and binds each statement to itself every time.
type auditConn struct {
	conn                    *sql.Conn
	begin, commit, rollback *sql.Stmt
	prepared                preparedAudit
	stmts                   auditStmts
}

const (
	beginAudit    = "BEGIN IMMEDIATE" // the write lock at once, as the DSN's _txlock asks of database/sql
	commitAudit   = "COMMIT"
	rollbackAudit = "ROLLBACK"
)

// openAuditConn takes db's connection for the audit writer; db must allow
// one connection, which no one else uses.
func openAuditConn(ctx context.Context, db *sql.DB) (*auditConn, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening the audit log's connection: %w", err)
	}
	prepared, err := prepareAudit(ctx, conn, append([]string{beginAudit, commitAudit, rollbackAudit}, auditQueries...))
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &auditConn{conn: conn, begin: prepared[beginAudit], commit: prepared[commitAudit], rollback: prepared[rollbackAudit],
		prepared: prepared, stmts: prepared.stmts(nil)}, nil
}

// write writes a batch in one transaction. After a failure the transaction
// is rolled back, so that the next batch begins afresh: a failed COMMIT
// (SQLITE_BUSY) can leave it open.
func (c *auditConn) write(s *DB, batch []AuditEntry) error {
	ctx := context.Background()
	if _, err := c.begin.ExecContext(ctx); err != nil {
		return fmt.Errorf("writing audit log: %w", err)
	}
	w := newAuditTx(s, c.stmts)
	if err := w.writeAll(ctx, batch); err != nil {
		c.rollback.ExecContext(ctx) //nolint:errcheck // the write's error is what matters
		return err
	}
	if _, err := c.commit.ExecContext(ctx); err != nil {
		c.rollback.ExecContext(ctx) //nolint:errcheck // "no transaction is active" when SQLite ended it
		return fmt.Errorf("committing audit log: %w", err)
	}
	w.kept()
	return nil
}

func (c *auditConn) close() error {
	return errors.Join(c.prepared.close(), c.conn.Close())
}

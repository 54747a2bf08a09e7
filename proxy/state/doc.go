// Package state is the firewall's own state database, in one place: the
// noise secret, the audit log of every statement received, the budget ledger
// and the SQL dialect that lets all three live in PostgreSQL as well as in
// SQLite. It is a separate database from the protected one, which is never
// written.
//
// An answered query passes through it twice, in this order: its charge is
// committed to the ledger before the protected data is read (Budget.Charge),
// and its audit row, with the statement and the cells released, is committed
// before the answer leaves (DB.AuditDurable). A crash between the two leaves a
// charge without an answer, which errs on the safe side.
package state

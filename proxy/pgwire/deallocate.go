package pgwire

import (
	"countwall/pgerror"
	"countwall/proxy"
)

// checkHousekeeping refuses, before it runs, a statement of the session's
// own housekeeping that PostgreSQL would refuse in this state: a
// DEALLOCATE of no statement, a cursor statement or a savepoint statement
// out of place, a PREPARE of what is not a query.
func (c *conn) checkHousekeeping(st *proxy.Statement) error {
	if st.PrepareName != "" {
		return preparable(st) // what runs is the PREPARE, not its query
	}
	if st.DiscardAll && (c.txStatus != txIdle || c.implicitBlock) {
		return pgerror.Errorf(pgerror.ActiveSQLTransaction, "DISCARD ALL cannot run inside a transaction block")
	}
	if err := c.checkDeallocate(st); err != nil {
		return err
	}
	if err := c.checkCursor(st); err != nil {
		return err
	}
	return c.checkSavepoint(st)
}

// checkDeallocate refuses, before it runs, a DEALLOCATE that names no
// statement this session prepared, as PostgreSQL does (26000): a driver
// that tidies up after itself (psycopg 3 deallocates the statements it
// prepared) must see the same outcome as against PostgreSQL.
func (c *conn) checkDeallocate(st *proxy.Statement) error {
	d := st.Deallocate
	if d == nil || d.All {
		return nil
	}
	if _, ok := c.statements[d.Name]; !ok || d.Name == "" {
		return pgerror.Errorf(pgerror.InvalidSQLStatementName, "prepared statement %q does not exist", d.Name)
	}
	return nil
}

// deallocate drops what a DEALLOCATE that ran names: one named statement,
// or for ALL every named one (the unnamed statement is the protocol's
// own, which PostgreSQL's DEALLOCATE ALL leaves alone too).
//
// DISCARD ALL drops every named statement too, and every cursor and named
// portal, as PostgreSQL's does (a pool such as PgBouncer sends it between
// clients, which must not find the last one's statements).
func (c *conn) deallocate(st *proxy.Statement) {
	d := st.Deallocate
	if st.DiscardAll {
		d = &proxy.Deallocation{All: true}
		clear(c.cursors)
		for name := range c.portals {
			if name != "" {
				delete(c.portals, name)
			}
		}
	}
	if d == nil {
		return
	}
	if !d.All {
		delete(c.statements, d.Name)
		return
	}
	for name := range c.statements {
		if name != "" {
			delete(c.statements, name)
		}
	}
}

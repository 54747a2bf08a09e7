package pgwire

import (
	"countwall/pgerror"
	"countwall/proxy"
)

// SET LOCAL lasts until its transaction ends, as in PostgreSQL: outside a
// block it changes nothing and warns (25P01); inside one, the settings it
// named go back at COMMIT to what they were just before the first SET
// LOCAL of each (a ROLLBACK restores every setting anyway). A plain SET of
// the same name after it in the block is undone with it, where PostgreSQL
// would keep it.

// setLocalOutsideBlock reports whether st is a SET LOCAL outside a block,
// which is answered with the warning and changes nothing.
func (c *conn) setLocalOutsideBlock(st *proxy.Statement) bool {
	if st.LocalSetting == "" || c.txStatus != txIdle || c.implicitBlock {
		return false
	}
	c.warn(pgerror.NoActiveSQLTransaction, "SET LOCAL can only be used in transaction blocks")
	return true
}

// noteLocal records a SET LOCAL about to run in a transaction, whose
// settings at its start are saved.
func (c *conn) noteLocal(st *proxy.Statement) {
	if st.LocalSetting == "" {
		return
	}
	if c.localSettings == nil {
		c.localSettings = map[string]proxy.Settings{}
	}
	if _, seen := c.localSettings[st.LocalSetting]; !seen {
		c.localSettings[st.LocalSetting] = c.session.Settings()
	}
}

// revertLocal undoes the committing transaction's SET LOCALs.
func (c *conn) revertLocal() {
	if len(c.localSettings) > 0 {
		now := c.session.Settings()
		for name, before := range c.localSettings {
			now = now.Reverted([]string{name}, before)
		}
		c.session.RestoreSettings(now)
	}
	c.localSettings = nil
}

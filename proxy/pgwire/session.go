package pgwire

import (
	"context"
	"time"

	"countwall/proxy"
)

// Session is one analyst's session with the engine. Every method is
// required, the auditing ones (Refused, and Execute's own audit) included:
// the front door audits every statement it receives through them, so a
// decorator around a session (metrics, tracing) that does not pass each one
// on does not compile, rather than silently auditing less.
type Session interface {
	// Prepare reads a statement once; the front door keeps what it
	// returns for Describe, Execute and Refused and never sends the text
	// again. It refuses nothing itself.
	Prepare(sql string) *proxy.Statement
	// Describe validates a prepared statement without running it and
	// says what it takes and returns.
	Describe(ctx context.Context, st *proxy.Statement) (*proxy.Description, error)
	// Execute runs a prepared statement, and audits it whatever its
	// outcome; args are the values bound to $1..$n (text form, nil =
	// NULL), nil for the simple protocol.
	Execute(ctx context.Context, st *proxy.Statement, args []*string) (*proxy.Result, error)
	// Refused audits a statement the front door refused before Execute:
	// at Parse or Bind, or in a failed transaction block.
	Refused(st *proxy.Statement, err error)
	// Settings and RestoreSettings save and restore the session's
	// settings: a SET in a transaction that fails or is rolled back is
	// undone, as PostgreSQL undoes it.
	Settings() proxy.Settings
	RestoreSettings(proxy.Settings)
	// UseStartupSettings makes the client settings of the startup packet
	// (proxy.StartupSettings) the session's: what SHOW reports until a
	// SET, and what RESET returns to, as in PostgreSQL.
	UseStartupSettings(defaults map[string]string)
	// Setting is the value the session SET a setting to (its name
	// lower-cased), false while it keeps its default: the front door
	// reports a change of the settings clients track (application_name)
	// with ParameterStatus, as PostgreSQL does.
	Setting(name string) (string, bool)
	// Done is closed when the engine ends the session (its analyst was
	// removed from the config); the connection is then terminated with
	// 57P01.
	Done() <-chan struct{}
	Close()
}

// Sessions opens a session for an authenticated analyst.
type Sessions func(analyst string) Session

// refused has the session audit (and log) a statement the front door
// refused before it ran (at Parse or Bind, or in a failed transaction
// block), then sends the error.
func (c *conn) refused(st *proxy.Statement, err error) {
	c.session.Refused(st, err)
	c.sendError(err)
}

// watchTermination wakes the connection's read when the engine ends its
// session, so that the loop terminates it with 57P01 without waiting for
// the client's next message. The returned func stops the watch.
func (c *conn) watchTermination() (stop func()) {
	ended := c.session.Done()
	done := make(chan struct{})
	go func() {
		select {
		case <-ended:
			// Stored before the deadline is moved: the loop checks ended
			// after setting its own deadline, so one of the two wakes it.
			c.ended.Store(true)
			c.nc.SetReadDeadline(time.Now())
		case <-done:
		}
	}()
	return func() { close(done) }
}

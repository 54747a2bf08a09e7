package pgwire

import "time"

// Optional Session capabilities. A Session that has them gets the audit and
// termination behaviour below; one that lacks them (a test double) works
// without.

// refusalRecorder records a statement refused before it reached Exec (at
// Parse or Bind), so that the audit log holds every statement received.
type refusalRecorder interface {
	Refused(sql string, err error)
}

// terminable is a session the engine may end (its analyst was removed from
// the config): Done is closed then, and the connection is terminated with
// 57P01.
type terminable interface {
	Done() <-chan struct{}
}

// refused has the session log and audit a statement refused at Parse or
// Bind, then sends the error.
func (c *conn) refused(sql string, err error) {
	if r, ok := c.session.(refusalRecorder); ok {
		r.Refused(sql, err)
	}
	c.sendError(err)
}

// watchTermination wakes the connection's read when the engine ends its
// session, so that the loop terminates it with 57P01 without waiting for
// the client's next message. The returned func stops the watch.
func (c *conn) watchTermination() (stop func()) {
	t, ok := c.session.(terminable)
	if !ok {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-t.Done():
			// Stored before the deadline is moved: the loop checks ended
			// after setting its own deadline, so one of the two wakes it.
			c.ended.Store(true)
			c.nc.SetReadDeadline(time.Now())
		case <-done:
		}
	}()
	return func() { close(done) }
}

package pgwire

import (
	"time"

	"countwall/proxy"
)

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

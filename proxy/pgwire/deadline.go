package pgwire

import (
	"context"
	"time"
)

// A statement's deadline is one timer per connection, armed as each
// statement starts and stopped as it ends, which cancels the statement in
// flight when it fires, as a CancelRequest does but with the deadline as
// the cause, so that the statement is reported as timed out: a context
// with its own deadline made a timer, and three allocations, for every
// statement.
type deadline struct {
	timer *time.Timer
	at    time.Time // when the armed statement's time is up; zero when none is armed
}

// armDeadline starts the statement's time, under c.mu. A time under a
// millisecond (PostgreSQL's statement_timeout counts in them) is up
// before the statement can run: it is cancelled at once, not by a race
// with the timer.
func (c *conn) armDeadline(d time.Duration) {
	if d < time.Millisecond {
		c.running(context.DeadlineExceeded)
		return
	}
	c.deadline.at = time.Now().Add(d)
	if c.deadline.timer == nil {
		c.deadline.timer = time.AfterFunc(d, c.expire)
		return
	}
	c.deadline.timer.Reset(d)
}

// disarmDeadline ends the statement's time, under c.mu.
func (c *conn) disarmDeadline() {
	if c.deadline.timer != nil {
		c.deadline.timer.Stop()
	}
	c.deadline.at = time.Time{}
}

// expire cancels the statement in flight if its time is up. A firing for
// a statement that has ended, run late while the next began, finds that
// statement's time not up (or none armed) and does nothing: the timer was
// set again for it.
func (c *conn) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running != nil && !c.deadline.at.IsZero() && !time.Now().Before(c.deadline.at) {
		c.running(context.DeadlineExceeded)
	}
}

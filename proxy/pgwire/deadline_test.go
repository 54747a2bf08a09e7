package pgwire

import (
	"context"
	"testing"
	"time"
)

// TestStatementDeadline: the connection's one timer cancels the statement
// in flight once its time is up, never a later statement (a firing left
// over from the one before finds the new statement's time not up), and a
// time under a millisecond cancels at once, each with the deadline as the
// cause (a statement timeout, not a user's cancel).
func TestStatementDeadline(t *testing.T) {
	var c conn
	cancelled := make(chan error, 10)
	c.running = func(cause error) { cancelled <- cause }
	count := func() int { return len(cancelled) }

	c.mu.Lock()
	c.armDeadline(5 * time.Millisecond)
	c.mu.Unlock()
	select {
	case cause := <-cancelled:
		if cause != context.DeadlineExceeded {
			t.Errorf("cancelled with %v, want the deadline", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a statement past its 5 ms was not cancelled within 5 s")
	}

	// The next statement, with all the time in the world: a late firing
	// for the one before does nothing.
	c.mu.Lock()
	c.disarmDeadline()
	c.armDeadline(time.Hour)
	c.mu.Unlock()
	c.expire()
	if n := count(); n != 0 {
		t.Fatalf("a stale firing cancelled the next statement (%d cancels)", n)
	}

	// Ended: nothing armed, nothing to cancel.
	c.mu.Lock()
	c.disarmDeadline()
	c.mu.Unlock()
	c.expire()
	if n := count(); n != 0 {
		t.Fatalf("a firing after the statement ended cancelled (%d cancels)", n)
	}

	c.mu.Lock()
	c.armDeadline(time.Microsecond)
	c.mu.Unlock()
	if n := count(); n != 1 {
		t.Fatalf("a time under a millisecond: %d cancels at arming, want 1", n)
	}
	if cause := <-cancelled; cause != context.DeadlineExceeded {
		t.Errorf("a time under a millisecond cancelled with %v, want the deadline", cause)
	}
}

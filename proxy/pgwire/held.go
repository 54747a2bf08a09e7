package pgwire

import "errors"

// A connection's answers leave when the server is about to wait for the
// client, not one by one: ready ends a statement's cycle without writing,
// and the connection's reader (inputReader) writes what is pending before
// it reads the socket, which pgproto3 does only once the messages already
// read are used up. A client that pipelines its statements thus gets every
// answer to what it sent in one write; one that waits for each answer gets
// it as soon as the server would wait for the next statement, as before.
//
// While answers wait, their audit rows are queued, not committed
// (proxy.WithHeldAnswers), and the connection's writer (heldWriter) waits
// for those rows to be committed before any byte leaves: a pipelined
// connection's answers share one commit, and still none leaves before its
// row is durable.

// inputReader reads the client's messages, writing the pending answers
// before each read of the socket.
type inputReader struct{ c *conn }

func (r inputReader) Read(p []byte) (int, error) {
	if r.c.unflushed {
		r.c.unflushed = false
		r.c.be.Flush() //nolint:errcheck // a broken socket fails the read below
	}
	return r.c.nc.Read(p)
}

// heldWriter writes to the client once the held answers' audit rows are
// committed. If a commit failed, the answers are withheld and the
// connection closed: the audit must never show fewer answers than clients
// received, and the statements cannot be answered with an error any more.
type heldWriter struct{ c *conn }

// errAnswersWithheld is the write error of a connection whose held answers
// were withheld.
var errAnswersWithheld = errors.New("answers withheld: their audit rows could not be written")

func (w heldWriter) Write(p []byte) (int, error) {
	c := w.c
	if c.held.Held() > 0 {
		if err := c.held.Wait(); err != nil {
			c.log.Error("audit log write failed; answers withheld and connection closed", "analyst", c.analyst, "err", err)
			c.nc.Close()
			return 0, errAnswersWithheld
		}
	}
	return c.nc.Write(p)
}

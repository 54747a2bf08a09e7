package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/proxy"
)

// ServerVersion is reported in the server_version parameter.
const ServerVersion = proxy.ServerVersion

// conn is one client connection.
type conn struct {
	srv     *Server
	nc      net.Conn
	be      *pgproto3.Backend
	pid     uint32
	secret  uint32
	analyst string
	// log is the server's logger with the client's address: every line
	// about this connection names where it came from.
	log     *slog.Logger
	session Session
	enc     encoder // the session's result messages (encode.go)

	statements map[string]*prepared
	portals    map[string]*portal
	cursors    map[string]*cursor
	txStatus   txState
	savepoints []string // of the open block, oldest first
	// implicitBlock is set while a Query message of several statements
	// runs: PostgreSQL runs them in one transaction, in which a DECLARE
	// without HOLD is allowed and whose end closes its cursors.
	implicitBlock bool
	// txSettings are the session's settings when the open transaction
	// began (a block, or the implicit one of a Query message of several
	// statements), restored if it is rolled back; savepointSettings are
	// those at each savepoint.
	txSettings        *proxy.Settings
	savepointSettings []proxy.Settings
	// reported are the values of the settings the client tracks as it was
	// last told them (ParameterStatus), startupReported as at startup
	// (report.go).
	reported, startupReported map[string]string
	// localSettings are the settings the open transaction SET LOCAL, each
	// with the session's settings just before its first (setlocal.go).
	localSettings map[string]proxy.Settings

	mu       sync.Mutex
	running  context.CancelCauseFunc // the statement in flight, for cancel requests and its deadline
	deadline deadline                // the statement in flight's (deadline.go)

	ended atomic.Bool // the engine ended the session (session.go)

	// unflushed says a statement's cycle ended with output not yet
	// written, and held are the answers waiting for their audit rows
	// (held.go).
	unflushed bool
	held      proxy.HeldAnswers
}

func (c *conn) cancelRunning() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running != nil {
		c.running(nil)
	}
}

func (s *Server) serveConn(nc net.Conn) {
	defer nc.Close()
	c := &conn{srv: s, nc: nc, statements: map[string]*prepared{}, portals: map[string]*portal{}, cursors: map[string]*cursor{}, txStatus: txIdle,
		log: s.logger.With("client", clientAddr(nc))}
	// Startup and authentication must finish within the auth timeout,
	// counted from accept; afterwards the idle timeout applies.
	nc.SetDeadline(time.Now().Add(s.opts.AuthTimeout))
	// Checked after setting the deadline: a Shutdown that began before it
	// is seen here, one that begins after it wakes the read below.
	if s.closing.Load() {
		return
	}
	startup, ok := c.startup()
	if !ok {
		return
	}
	if !c.authenticate(startup) {
		return
	}
	// Startup options are checked once the client is known, as
	// PostgreSQL applies them after authentication.
	defaults, err := proxy.StartupSettings(startup.Parameters)
	if err != nil {
		c.fatalError(err)
		return
	}
	s.authenticated(nc)
	// A session slot is taken only once the password is proven, so that
	// clients who never authenticate cannot lock analysts out.
	if !s.register(c) {
		c.log.Warn("login refused: too many connections", "analyst", c.analyst, "max_connections", s.opts.MaxConnections)
		c.fatal(pgerror.TooManyConnections, "sorry, too many clients already")
		return
	}
	defer s.unregister(c)
	// One line a login, once the session is granted.
	c.log.Info("login", "analyst", c.analyst, "tls", c.tls())
	nc.SetDeadline(time.Time{})
	c.session = s.sessions(c.analyst)
	defer c.session.Close()
	c.session.UseStartupSettings(defaults)
	defer c.watchTermination()()
	c.greet(defaults)
	c.loop()
}

// clientAddr is where a connection came from: host:port, or "local" for a
// Unix socket, as PostgreSQL logs "[local]".
func clientAddr(nc net.Conn) string {
	a := nc.RemoteAddr()
	if a == nil || a.Network() == "unix" || a.String() == "" || a.String() == "@" {
		return "local"
	}
	return a.String()
}

// tls reports whether the connection is encrypted.
func (c *conn) tls() bool {
	_, ok := c.nc.(*tls.Conn)
	return ok
}

// loop serves messages until the client leaves, the connection idles out
// or the server shuts down.
func (c *conn) loop() {
	ignoreUntilSync := false
	for {
		if t := c.srv.opts.IdleTimeout; t > 0 {
			c.nc.SetReadDeadline(time.Now().Add(t))
		} else {
			c.nc.SetReadDeadline(time.Time{})
		}
		// Checked after setting the deadline, which would otherwise undo
		// the wake-up of a Shutdown that began just before it.
		if c.srv.closing.Load() || c.ended.Load() {
			c.fatal(pgerror.AdminShutdown, "terminating connection due to administrator command")
			return
		}
		msg, err := c.be.Receive()
		if err != nil {
			var ne net.Error
			var tooLong *pgproto3.ExceededMaxBodyLenErr
			switch {
			case c.srv.closing.Load() || c.ended.Load():
				c.fatal(pgerror.AdminShutdown, "terminating connection due to administrator command")
			case errors.As(err, &ne) && ne.Timeout():
				c.fatal(pgerror.IdleSessionTimeout, "terminating connection due to idle-session timeout")
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
			case errors.As(err, &tooLong):
				c.fatal(pgerror.ProgramLimitExceeded, fmt.Sprintf("message of %d bytes is over the limit of %d", tooLong.ActualBodyLen, tooLong.MaxExpectedBodyLen))
			default:
				c.fatal(pgerror.ProtocolViolation, invalidMessage(err))
			}
			return
		}
		if ignoreUntilSync && c.txStatus == txIdle {
			c.rollbackSettings() // the implicit transaction up to Sync failed
		}
		if ignoreUntilSync {
			switch msg.(type) {
			case *pgproto3.Sync:
				ignoreUntilSync = false
				c.endImplicitTransaction()
				c.ready()
			case *pgproto3.Terminate:
				return
			}
			continue
		}
		switch m := msg.(type) {
		case *pgproto3.Query:
			c.simpleQuery(m.String)
			c.ready()
		case *pgproto3.Parse:
			ignoreUntilSync = !c.parse(m)
		case *pgproto3.Bind:
			ignoreUntilSync = !c.bind(m)
		case *pgproto3.Describe:
			ignoreUntilSync = !c.describe(m)
		case *pgproto3.Execute:
			ignoreUntilSync = !c.execute(m)
		case *pgproto3.Close:
			ignoreUntilSync = !c.close(m)
		case *pgproto3.Sync:
			c.endImplicitTransaction()
			c.ready()
		case *pgproto3.Flush:
			c.be.Flush()
		case *pgproto3.Terminate:
			return
		case *pgproto3.FunctionCall:
			// A self-contained cycle like Query: refuse it and carry on.
			c.sendError(pgerror.Errorf(pgerror.FeatureNotSupported, "function calls (FunctionCall messages) are not supported"))
			c.ready()
		default:
			c.fatal(pgerror.ProtocolViolation, unexpectedMessage(msg))
			return
		}
	}
}

// ready ends a statement's cycle; the answer is written before the server
// next waits for input (held.go).
func (c *conn) ready() {
	c.reportSettings()
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: byte(c.txStatus)})
	c.unflushed = true
}

// run executes one statement with the query deadline, cancellable by a
// CancelRequest. The session logs and audits it.
func (c *conn) run(st *proxy.Statement, args []*string) (*proxy.Result, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ctx = proxy.WithHeldAnswers(ctx, &c.held)
	c.mu.Lock()
	c.running = cancel
	if t := c.srv.opts.QueryTimeout; t > 0 {
		c.armDeadline(t)
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running = nil
		c.disarmDeadline()
		c.mu.Unlock()
		cancel(nil)
	}()
	var res *proxy.Result
	err := c.guard("exec", func() (err error) {
		res, err = c.session.Execute(ctx, st, args)
		return err
	})
	if err == nil {
		res = c.transactionControl(st.Transaction, st.Savepoint, res)
	}
	return res, err
}

// errPanicked is what the analyst sees when the engine panicked on a
// statement; the panic itself goes to the log.
var errPanicked = pgerror.Internal(errors.New("the engine panicked"))

// guard runs one call into the engine so that a bug there fails the
// statement, not the server and every other analyst's session with it.
func (c *conn) guard(what string, call func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("engine panicked", "call", what, "analyst", c.analyst, "panic", p, "stack", string(debug.Stack()))
			err = errPanicked
		}
	}()
	return call()
}

// prepare has the session read a statement once; false when the engine
// panicked, which has been reported to the client.
func (c *conn) prepare(sql string) (st *proxy.Statement, ok bool) {
	err := c.guard("prepare", func() error {
		st = c.session.Prepare(sql)
		return nil
	})
	if err != nil {
		c.sendError(err)
		return nil, false
	}
	return st, true
}

// simpleQuery runs a Query message: each statement it holds in turn, each
// answered as it runs, up to the first that fails, as PostgreSQL runs them
// (psql -c "SET ...; SELECT ...", a driver's batch in the simple protocol).
//
// Statements outside a block run in one implicit transaction, so a SET
// among them is undone when a later one fails, as PostgreSQL undoes it.
func (c *conn) simpleQuery(sql string) {
	batch := proxy.Batch(sql)
	c.implicitBlock = len(batch) > 1
	for _, one := range batch {
		if c.implicitBlock && c.txStatus == txIdle && c.txSettings == nil {
			c.beginSettings()
		}
		if !c.simpleStatement(one) {
			if c.txStatus == txIdle {
				c.rollbackSettings()
			}
			break
		}
	}
	c.implicitBlock = false
	if c.txStatus == txIdle {
		c.revertLocal()
		c.txSettings = nil // the implicit transaction ended
		c.closeCursorsAtEnd()
	}
}

// simpleStatement runs one statement of a Query message; false when it
// failed, which ends the message's statements.
func (c *conn) simpleStatement(sql string) bool {
	st, ok := c.prepare(sql)
	if !ok {
		return false
	}
	if err := c.refuseInFailedBlock(st); err != nil {
		c.refused(st, err)
		return false
	}
	if err := c.checkHousekeeping(st); err != nil {
		c.refused(st, err)
		return false
	}
	if c.setLocalOutsideBlock(st) {
		c.be.Send(c.enc.commandComplete("SET"))
		return true
	}
	c.noteLocal(st)
	if st.PrepareName != "" {
		return c.sqlPrepare(st)
	}
	if ex := st.CursorOp; ex != nil && ex.Kind == ir.ChatterExecute {
		return c.sqlExecute(st, ex)
	}
	res, err := c.run(st, nil)
	if err != nil {
		c.sendError(err)
		return false
	}
	c.deallocate(st)
	if res.Tag == "" && len(res.Columns) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return true
	}
	if st.Copy != nil {
		return c.sendCopy(res, *st.Copy)
	}
	if c.cursorAnswer(st, res) {
		return true
	}
	c.sendResult(res)
	return true
}

// sendResult sends a simple-protocol answer: its columns, rows, tag and
// notice.
func (c *conn) sendResult(res *proxy.Result) {
	if len(res.Columns) > 0 {
		c.be.Send(c.enc.rowDescription(res.Columns, nil))
	}
	c.sendRows(res, nil)
}

// sendRows sends a result's rows, command tag and budget notice.
func (c *conn) sendRows(res *proxy.Result, formats []int16) {
	for _, row := range res.Rows {
		c.be.Send(c.enc.dataRow(res.Columns, row, formats))
	}
	c.be.Send(c.enc.commandComplete(res.Tag))
	if res.Notice != "" {
		c.sendNotice(res.Notice)
	}
}

// sendNotice sends an answer's notice (its charge, its withheld rows).
func (c *conn) sendNotice(msg string) {
	c.be.Send(&pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: string(pgerror.SuccessfulCompletion), Message: msg})
}

// sendError encodes an engine or protocol error. Anything that is not a
// *pgerror.Error is reported generically so that no internal detail leaks.
func (c *conn) sendError(err error) {
	pe := pgerror.Public(err)
	er := &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: string(pe.Code), Message: pe.Message, Detail: pe.Detail, Hint: pe.Hint}
	if c.txStatus == txBlock {
		c.txStatus = txFailed
	}
	c.be.Send(er)
}

// fatal sends a FATAL error; the caller then closes the connection.
// fatalError ends the connection with a refusal's code, message and hint.
func (c *conn) fatalError(err error) {
	var pe *pgerror.Error
	if !errors.As(err, &pe) {
		c.fatal(pgerror.InternalError, "internal error")
		return
	}
	c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: string(pe.Code), Message: pe.Message, Hint: pe.Hint})
	c.be.Flush()
}

func (c *conn) fatal(code pgerror.Code, msg string) {
	c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: string(code), Message: msg})
	c.be.Flush()
}

// close closes a prepared statement or a portal; false for a Close of
// neither, a protocol violation, as PostgreSQL reads it.
func (c *conn) close(m *pgproto3.Close) bool {
	switch m.ObjectType {
	case 'S':
		delete(c.statements, m.Name)
	case 'P':
		delete(c.portals, m.Name)
		delete(c.cursors, m.Name) // a DECLAREd cursor is a portal too
	default:
		c.sendError(pgerror.Errorf(pgerror.ProtocolViolation, "invalid CLOSE message subtype %d", m.ObjectType))
		return false
	}
	c.be.Send(&pgproto3.CloseComplete{})
	return true
}

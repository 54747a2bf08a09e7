package pgwire

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

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
	session Session

	statements map[string]*prepared
	portals    map[string]*portal
	txStatus   byte // 'I' idle, 'T' in a transaction block, 'E' failed block

	mu      sync.Mutex
	running context.CancelFunc // the statement in flight, for cancel requests

	ended atomic.Bool // the engine ended the session (hooks.go)
}

type prepared struct {
	sql       string
	desc      *proxy.Description
	paramOIDs []uint32
}

type portal struct {
	stmt          *prepared
	args          []*string
	resultFormats []int16
}

func (c *conn) cancelRunning() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running != nil {
		c.running()
	}
}

func (s *Server) serveConn(nc net.Conn) {
	defer nc.Close()
	c := &conn{srv: s, nc: nc, statements: map[string]*prepared{}, portals: map[string]*portal{}, txStatus: 'I'}
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
	s.authenticated(nc)
	// A session slot is taken only once the password is proven, so that
	// clients who never authenticate cannot lock analysts out.
	if !s.register(c) {
		c.fatal(pgerror.TooManyConnections, "sorry, too many clients already")
		return
	}
	defer s.unregister(c)
	nc.SetDeadline(time.Time{})
	c.session = s.sessions(c.analyst)
	defer c.session.Close()
	defer c.watchTermination()()
	c.greet(startup)
	c.loop()
}

// Startup packet codes (PostgreSQL's protocol, "Message Formats").
const (
	maxStartupPacketBytes = 10000 // PostgreSQL's MAX_STARTUP_PACKET_LENGTH
	cancelRequestCode     = 1234<<16 | 5678
	sslRequestCode        = 1234<<16 | 5679
	gssEncRequestCode     = 1234<<16 | 5680
)

// readStartupPacket reads one length-prefixed startup packet straight from
// the socket, without buffering past it: after an SSLRequest the next bytes
// belong to the TLS handshake.
func readStartupPacket(r io.Reader) (code uint32, body []byte, err error) {
	var header [4]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return 0, nil, err
	}
	n := int(binary.BigEndian.Uint32(header[:]))
	if n < 8 || n > maxStartupPacketBytes {
		return 0, nil, fmt.Errorf("invalid length of startup packet: %d", n)
	}
	body = make([]byte, n-4)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, err
	}
	return binary.BigEndian.Uint32(body), body, nil
}

// startup reads SSL/GSS negotiation, cancel requests and the startup message.
func (c *conn) startup() (*pgproto3.StartupMessage, bool) {
	raw := c.nc
	for tries := 0; tries < 3; tries++ {
		code, body, err := readStartupPacket(c.nc)
		if err != nil {
			return nil, false
		}
		if tries == 0 {
			c.srv.loginStarted(raw)
		}
		switch {
		case code == sslRequestCode:
			if c.srv.opts.TLSConfig == nil {
				if _, err := c.nc.Write([]byte{'N'}); err != nil {
					return nil, false
				}
				continue
			}
			if _, err := c.nc.Write([]byte{'S'}); err != nil {
				return nil, false
			}
			tc := tls.Server(c.nc, c.srv.opts.TLSConfig)
			if err := tc.Handshake(); err != nil {
				return nil, false
			}
			c.nc = tc
		case code == gssEncRequestCode:
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return nil, false
			}
		case code == cancelRequestCode:
			var m pgproto3.CancelRequest
			if m.Decode(body) == nil {
				c.srv.cancel(m.ProcessID, m.SecretKey)
			}
			return nil, false
		case code>>16 != 3:
			c.refuseProtocol(code)
			return nil, false
		default:
			c.be = pgproto3.NewBackend(c.nc, c.nc)
			c.be.SetMaxBodyLen(c.srv.opts.MaxMessageBytes)
			// Any 3.x is read as 3.0, the version countwall speaks, and told
			// so as PostgreSQL tells it (NegotiateProtocolVersion).
			binary.BigEndian.PutUint32(body, pgproto3.ProtocolVersion30)
			m := &pgproto3.StartupMessage{}
			if err := m.Decode(body); err != nil {
				c.fatal(pgerror.ProtocolViolation, "invalid startup packet layout")
				return nil, false
			}
			c.negotiateProtocol(code, m)
			c.analyst = m.Parameters["user"]
			if c.analyst == "" {
				c.fatal(pgerror.InvalidAuthorization, "no PostgreSQL user name specified in startup packet")
				return nil, false
			}
			return m, true
		}
	}
	return nil, false
}

// refuseProtocol answers a startup in a protocol version other than 3 as
// PostgreSQL's postmaster does: with its "unsupported frontend protocol"
// error, in the old protocol's error format to a client older than 3 (a
// type byte and a NUL-terminated text, which such clients can read), as an
// ErrorResponse otherwise.
func (c *conn) refuseProtocol(version uint32) {
	msg := fmt.Sprintf("unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", version>>16, version&0xffff)
	if version>>16 < 3 {
		c.nc.Write(append([]byte("EFATAL:  "+msg+"\n"), 0)) //nolint:errcheck // the connection closes either way
		return
	}
	c.be = pgproto3.NewBackend(c.nc, c.nc)
	c.fatal(pgerror.FeatureNotSupported, msg)
}

// negotiateProtocol answers a 3.x startup asking for a newer minor
// version, or for protocol options ("_pq_." parameters), as PostgreSQL
// does: with the newest minor version it speaks (0) and the options it
// does not know, before authentication; the client then continues in 3.0.
func (c *conn) negotiateProtocol(version uint32, m *pgproto3.StartupMessage) {
	var unknown []string
	for name := range m.Parameters {
		if strings.HasPrefix(name, "_pq_.") {
			unknown = append(unknown, name)
			delete(m.Parameters, name)
		}
	}
	if version&0xffff == 0 && len(unknown) == 0 {
		return
	}
	sort.Strings(unknown)
	c.be.Send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknown})
}

func (c *conn) greet(startup *pgproto3.StartupMessage) {
	c.be.Send(&pgproto3.AuthenticationOk{})
	appName := startup.Parameters["application_name"]
	for _, p := range [][2]string{
		{"server_version", ServerVersion},
		{"server_encoding", "UTF8"},
		{"client_encoding", "UTF8"},
		{"DateStyle", "ISO, MDY"},
		{"integer_datetimes", "on"},
		{"standard_conforming_strings", "on"},
		{"TimeZone", "UTC"},
		{"IntervalStyle", "postgres"},
		{"is_superuser", "off"},
		{"session_authorization", c.analyst},
		{"application_name", appName},
	} {
		c.be.Send(&pgproto3.ParameterStatus{Name: p[0], Value: p[1]})
	}
	c.be.Send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: uint32Bytes(c.secret)})
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.txStatus})
	c.be.Flush()
}

func uint32Bytes(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

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
			if m.ObjectType == 'S' {
				delete(c.statements, m.Name)
			} else {
				delete(c.portals, m.Name)
			}
			c.be.Send(&pgproto3.CloseComplete{})
		case *pgproto3.Sync:
			c.endImplicitTransaction()
			c.ready()
		case *pgproto3.Flush:
			c.be.Flush()
		case *pgproto3.Terminate:
			return
		case *pgproto3.FunctionCall:
			// A self-contained cycle like Query: refuse it and carry on.
			c.sendError(&wireError{code: pgerror.FeatureNotSupported, msg: "function calls (FunctionCall messages) are not supported"})
			c.ready()
		default:
			c.fatal(pgerror.ProtocolViolation, unexpectedMessage(msg))
			return
		}
	}
}

func (c *conn) ready() {
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.txStatus})
	c.be.Flush()
}

// run executes one statement with the query deadline, cancellable by a
// CancelRequest, and logs its outcome without its text.
func (c *conn) run(sql string, args []*string) (*proxy.Result, error) {
	ctx, cancel := context.WithCancel(context.Background())
	if t := c.srv.opts.QueryTimeout; t > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), t)
	}
	c.mu.Lock()
	c.running = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running = nil
		c.mu.Unlock()
		cancel()
	}()
	start := time.Now()
	var res *proxy.Result
	err := c.guard("exec", func() (err error) {
		res, err = c.session.Exec(ctx, sql, args)
		return err
	})
	c.srv.logger.Info("statement", "analyst", c.analyst, "fingerprint", c.statementFingerprint(sql),
		"outcome", outcome(err), "latency", time.Since(start))
	if err == nil {
		res = c.transactionControl(res)
	}
	return res, err
}

// errPanicked is what the analyst sees when the engine panicked on a
// statement; the panic itself goes to the log.
var errPanicked = &wireError{code: pgerror.InternalError, msg: "internal error; the administrator can find details in the log"}

// guard runs one call into the engine so that a bug there fails the
// statement, not the server and every other analyst's session with it.
func (c *conn) guard(what string, call func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.srv.logger.Error("engine panicked", "call", what, "analyst", c.analyst, "panic", p, "stack", string(debug.Stack()))
			err = errPanicked
		}
	}()
	return call()
}

func (c *conn) simpleQuery(sql string) {
	if err := c.refuseInFailedBlock(func() string { return sql }); err != nil {
		c.refused(sql, err)
		return
	}
	res, err := c.run(sql, nil)
	if err != nil {
		c.sendError(err)
		return
	}
	if res.Tag == "" && len(res.Columns) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	if len(res.Columns) > 0 {
		c.be.Send(rowDescription(res.Columns, nil))
	}
	c.sendRows(res, nil)
}

// sendRows sends a result's rows, command tag and budget notice.
func (c *conn) sendRows(res *proxy.Result, formats []int16) {
	for _, row := range res.Rows {
		c.be.Send(dataRow(res.Columns, row, formats))
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.Tag)})
	if res.Notice != "" {
		c.be.Send(&pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: pgerror.SuccessfulCompletion, Message: res.Notice})
	}
}

func (c *conn) parse(m *pgproto3.Parse) bool {
	if err := c.refuseInFailedBlock(func() string { return m.Query }); err != nil {
		c.refused(m.Query, err)
		return false
	}
	if _, exists := c.statements[m.Name]; exists && m.Name != "" {
		c.refused(m.Query, &wireError{code: pgerror.DuplicatePreparedStatement, msg: fmt.Sprintf("prepared statement %q already exists", m.Name)})
		return false
	}
	if m.Name != "" && namedCount(c.statements) >= c.srv.opts.MaxPreparedStatements {
		c.refused(m.Query, &wireError{code: pgerror.ProgramLimitExceeded, msg: fmt.Sprintf(
			"too many prepared statements: this session already holds %d, the limit; close unused ones with the protocol's Close message", c.srv.opts.MaxPreparedStatements)})
		return false
	}
	var desc *proxy.Description
	err := c.guard("describe", func() (err error) {
		desc, err = c.session.Describe(context.Background(), m.Query)
		return err
	})
	if err != nil {
		c.refused(m.Query, err)
		return false
	}
	oids := make([]uint32, len(desc.Params))
	for i, t := range desc.Params {
		oids[i] = typeOID(t)
		if i < len(m.ParameterOIDs) && m.ParameterOIDs[i] != 0 {
			oids[i] = m.ParameterOIDs[i]
		}
	}
	c.statements[m.Name] = &prepared{sql: m.Query, desc: desc, paramOIDs: oids}
	c.be.Send(&pgproto3.ParseComplete{})
	return true
}

func (c *conn) bind(m *pgproto3.Bind) bool {
	st, ok := c.statements[m.PreparedStatement]
	if !ok {
		c.sendError(&wireError{code: pgerror.InvalidSQLStatementName, msg: fmt.Sprintf("prepared statement %q does not exist", m.PreparedStatement)})
		return false
	}
	if err := c.refuseInFailedBlock(func() string { return st.sql }); err != nil {
		c.refused(st.sql, err)
		return false
	}
	if len(m.Parameters) != len(st.paramOIDs) {
		c.refused(st.sql, &wireError{code: pgerror.ProtocolViolation, msg: fmt.Sprintf("bind message supplies %d parameters, but the statement needs %d", len(m.Parameters), len(st.paramOIDs))})
		return false
	}
	if err := checkFormats(m.ParameterFormatCodes, len(m.Parameters), "parameter formats", "parameters"); err != nil {
		c.refused(st.sql, err)
		return false
	}
	if err := checkFormats(m.ResultFormatCodes, len(st.desc.Columns), "result formats", "columns"); err != nil {
		c.refused(st.sql, err)
		return false
	}
	if _, exists := c.portals[m.DestinationPortal]; exists && m.DestinationPortal != "" {
		c.refused(st.sql, &wireError{code: pgerror.DuplicateCursor, msg: fmt.Sprintf("portal %q already exists", m.DestinationPortal)})
		return false
	}
	if m.DestinationPortal != "" && namedCount(c.portals) >= c.srv.opts.MaxPortals {
		c.refused(st.sql, &wireError{code: pgerror.ProgramLimitExceeded, msg: fmt.Sprintf(
			"too many portals: this session already holds %d, the limit; close unused ones or end the transaction block", c.srv.opts.MaxPortals)})
		return false
	}
	args := make([]*string, len(m.Parameters))
	for i, raw := range m.Parameters {
		if raw == nil {
			continue
		}
		format := formatFor(m.ParameterFormatCodes, i)
		text, err := decodeParam(raw, format, st.paramOIDs[i])
		if err != nil {
			c.refused(st.sql, &wireError{code: pgerror.InvalidBinaryRepresentation, msg: fmt.Sprintf("parameter $%d: %v", i+1, err)})
			return false
		}
		args[i] = &text
	}
	c.portals[m.DestinationPortal] = &portal{stmt: st, args: args, resultFormats: m.ResultFormatCodes}
	c.be.Send(&pgproto3.BindComplete{})
	return true
}

func (c *conn) describe(m *pgproto3.Describe) bool {
	var st *prepared
	var formats []int16
	if m.ObjectType == 'S' {
		st = c.statements[m.Name]
		if st == nil {
			c.sendError(&wireError{code: pgerror.InvalidSQLStatementName, msg: fmt.Sprintf("prepared statement %q does not exist", m.Name)})
			return false
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: st.paramOIDs})
	} else {
		p := c.portals[m.Name]
		if p == nil {
			c.sendError(&wireError{code: pgerror.InvalidCursorName, msg: fmt.Sprintf("portal %q does not exist", m.Name)})
			return false
		}
		st, formats = p.stmt, p.resultFormats
	}
	if len(st.desc.Columns) == 0 {
		c.be.Send(&pgproto3.NoData{})
	} else {
		c.be.Send(rowDescription(st.desc.Columns, formats))
	}
	return true
}

func (c *conn) execute(m *pgproto3.Execute) bool {
	p := c.portals[m.Portal]
	if p == nil {
		c.sendError(&wireError{code: pgerror.InvalidCursorName, msg: fmt.Sprintf("portal %q does not exist", m.Portal)})
		return false
	}
	if err := c.refuseInFailedBlock(func() string { return p.stmt.sql }); err != nil {
		c.refused(p.stmt.sql, err)
		return false
	}
	res, err := c.run(p.stmt.sql, p.args)
	if err != nil {
		c.sendError(err)
		return false
	}
	if res.Tag == "" && len(res.Columns) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return true
	}
	// Results are small and complete; a row limit is not honoured by
	// suspending, so the whole answer is sent at once.
	c.sendRows(res, p.resultFormats)
	return true
}

// namedCount counts the named entries of a session's statements or portals;
// the unnamed one is replaced, never added.
func namedCount[T any](m map[string]T) int {
	n := len(m)
	if _, unnamed := m[""]; unnamed {
		n--
	}
	return n
}

// checkFormats applies PostgreSQL's Bind rules to format codes: none, one
// for all, or one per item, each 0 (text) or 1 (binary).
func checkFormats(codes []int16, items int, what, itemName string) error {
	if len(codes) > 1 && len(codes) != items {
		return &wireError{code: pgerror.ProtocolViolation, msg: fmt.Sprintf("bind message has %d %s but %d %s", len(codes), what, items, itemName)}
	}
	for _, f := range codes {
		if f != 0 && f != 1 {
			return &wireError{code: pgerror.ProtocolViolation, msg: fmt.Sprintf("unsupported format code: %d", f)}
		}
	}
	return nil
}

// wireError is a protocol-level error with its own SQLSTATE.
type wireError struct{ code, msg string }

func (e *wireError) Error() string    { return e.msg }
func (e *wireError) SQLState() string { return e.code }

type sqlStater interface{ SQLState() string }

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	var st sqlStater
	if errors.As(err, &st) {
		return st.SQLState()
	}
	return "XX000"
}

// sendError encodes an engine or protocol error. Anything without a
// SQLSTATE is reported generically so that no internal detail leaks.
func (c *conn) sendError(err error) {
	er := &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: pgerror.InternalError, Message: "internal error"}
	var st sqlStater
	if errors.As(err, &st) {
		er.Code, er.Message = st.SQLState(), err.Error()
	}
	var hinted interface{ HintText() string }
	if errors.As(err, &hinted) {
		er.Hint = hinted.HintText()
	}
	if c.txStatus == 'T' {
		c.txStatus = 'E'
	}
	c.be.Send(er)
}

// fatal sends a FATAL error; the caller then closes the connection.
func (c *conn) fatal(code, msg string) {
	c.be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: msg})
	c.be.Flush()
}

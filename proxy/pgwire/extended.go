package pgwire

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/pgerror"
	"countwall/pgtypes"
	"countwall/proxy"
)

// The extended query protocol: Parse, Bind, Describe and Execute. A
// statement is read once, at Parse (Session.Prepare); Bind and Execute use
// what Parse kept and never send its text to the engine again.

// prepared is a statement read at Parse: the engine's statement, what it
// returns, and the type of each parameter the client will bind.
type prepared struct {
	stmt      *proxy.Statement
	desc      *proxy.Description
	paramOIDs []pgtypes.OID // as declared, or as the statement's use types them
	// query is set for a statement SQL's PREPARE kept: it is the query
	// alone, though its text is the PREPARE's.
	query bool
}

type portal struct {
	stmt          *prepared
	args          []*string
	resultFormats []int16
	// ran is the answer once the portal has run: an Execute with a row
	// limit leaves the rest in it for the next Execute (PortalSuspended),
	// and a portal that has run is never run, nor charged, again.
	ran  *proxy.Result
	sent int // rows of ran sent so far
	// resumed is set once the first Execute has sent its part: the
	// answer's notice (its charge) goes with that one only, and a
	// statement without rows has then sent all it has.
	resumed bool
}

func (c *conn) parse(m *pgproto3.Parse) bool {
	st, ok := c.prepare(m.Query)
	if !ok {
		return false
	}
	if err := c.refuseInFailedBlock(st); err != nil {
		c.refused(st, err)
		return false
	}
	st.DeclareParams(declaredTypes(m.ParameterOIDs))
	if err := c.keep(m.Name, st, false); err != nil {
		c.refused(st, err)
		return false
	}
	c.be.Send(&pgproto3.ParseComplete{})
	return true
}

// keep describes a statement and keeps it under name, for Parse and for
// SQL's PREPARE alike (one namespace, as in PostgreSQL): a name in use
// (but the unnamed statement's) or past the session's limit is refused,
// and so is a statement that does not describe. query is set for PREPARE's
// query.
func (c *conn) keep(name string, st *proxy.Statement, query bool) error {
	if _, exists := c.statements[name]; exists && name != "" {
		return pgerror.Errorf(pgerror.DuplicatePreparedStatement, "prepared statement %q already exists", name)
	}
	if name != "" && namedCount(c.statements) >= c.srv.opts.MaxPreparedStatements {
		return pgerror.Errorf(pgerror.ProgramLimitExceeded,
			"too many prepared statements: this session already holds %d, the limit; close unused ones (the protocol's Close, or DEALLOCATE)", c.srv.opts.MaxPreparedStatements)
	}
	var desc *proxy.Description
	err := c.guard("describe", func() (err error) {
		desc, err = c.session.Describe(context.Background(), st)
		return err
	})
	if err != nil {
		return err
	}
	p := &prepared{stmt: st, desc: desc, paramOIDs: desc.Params, query: query}
	if p.answersItself() && st.Cursor == nil {
		p.paramOIDs = nil // PREPARE and COPY take none of their own, as in PostgreSQL
	}
	c.statements[name] = p
	return nil
}

func (c *conn) bind(m *pgproto3.Bind) bool {
	st, ok := c.statements[m.PreparedStatement]
	if !ok {
		c.sendError(pgerror.Errorf(pgerror.InvalidSQLStatementName, "prepared statement %q does not exist", m.PreparedStatement))
		return false
	}
	if err := c.checkBind(m, st); err != nil {
		c.refused(st.stmt, err)
		return false
	}
	args := make([]*string, len(m.Parameters))
	for i, raw := range m.Parameters {
		if raw == nil {
			continue
		}
		format := formatFor(m.ParameterFormatCodes, i)
		text, err := decodeParam(raw, format, st.paramOIDs[i], i+1)
		if err != nil {
			c.refused(st.stmt, err)
			return false
		}
		args[i] = &text
	}
	c.portals[m.DestinationPortal] = &portal{stmt: st, args: args, resultFormats: m.ResultFormatCodes}
	c.be.Send(&pgproto3.BindComplete{})
	return true
}

// checkBind applies PostgreSQL's rules to a Bind of st: not in a failed
// block, the right number of parameters, valid format codes, a portal name
// free and within the session's limit.
func (c *conn) checkBind(m *pgproto3.Bind, st *prepared) error {
	if err := c.refuseInFailedBlock(st.stmt); err != nil {
		return err
	}
	if len(m.Parameters) != len(st.paramOIDs) {
		return pgerror.Errorf(pgerror.ProtocolViolation, "bind message supplies %d parameters, but the statement needs %d", len(m.Parameters), len(st.paramOIDs))
	}
	if err := checkFormats(m.ParameterFormatCodes, len(m.Parameters), "parameter formats", "parameters"); err != nil {
		return err
	}
	if err := checkFormats(m.ResultFormatCodes, len(c.resultColumns(st)), "result formats", "columns"); err != nil {
		return err
	}
	if c.portalExists(m.DestinationPortal) && m.DestinationPortal != "" {
		return pgerror.Errorf(pgerror.DuplicateCursor, "portal %q already exists", m.DestinationPortal)
	}
	if m.DestinationPortal != "" && namedCount(c.portals) >= c.srv.opts.MaxPortals {
		return pgerror.Errorf(pgerror.ProgramLimitExceeded,
			"too many portals: this session already holds %d, the limit; close unused ones or end the transaction block", c.srv.opts.MaxPortals)
	}
	return nil
}

func (c *conn) describe(m *pgproto3.Describe) bool {
	var st *prepared
	var formats []int16
	if m.ObjectType == 'S' {
		st = c.statements[m.Name]
		if st == nil {
			c.sendError(pgerror.Errorf(pgerror.InvalidSQLStatementName, "prepared statement %q does not exist", m.Name))
			return false
		}
		oids := make([]uint32, len(st.paramOIDs))
		for i, t := range st.paramOIDs {
			oids[i] = uint32(t)
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
	} else if cur := c.cursors[m.Name]; cur != nil && c.portals[m.Name] == nil {
		// A DECLAREd cursor is a portal too (psycopg 3 describes its
		// server-side cursor so).
		c.be.Send(c.enc.rowDescription(cur.res.Columns, nil))
		return true
	} else {
		p := c.portals[m.Name]
		if p == nil {
			c.sendError(pgerror.Errorf(pgerror.InvalidCursorName, "portal %q does not exist", m.Name))
			return false
		}
		st, formats = p.stmt, p.resultFormats
	}
	if cols := c.resultColumns(st); len(cols) == 0 {
		c.be.Send(&pgproto3.NoData{})
	} else {
		c.be.Send(c.enc.rowDescription(cols, formats))
	}
	return true
}

func (c *conn) execute(m *pgproto3.Execute) bool {
	p := c.portals[m.Portal]
	if cur := c.cursors[m.Portal]; p == nil && cur != nil {
		return c.executeCursor(cur, m.MaxRows)
	}
	if p == nil {
		c.sendError(pgerror.Errorf(pgerror.InvalidCursorName, "portal %q does not exist", m.Portal))
		return false
	}
	if err := c.refuseInFailedBlock(p.stmt.stmt); err != nil {
		c.refused(p.stmt.stmt, err)
		return false
	}
	c.saveSettingsForImplicit(p.stmt.stmt)
	if err := c.unchangedColumns(p.stmt); err != nil {
		c.refused(p.stmt.stmt, err)
		return false
	}
	if p.ran != nil {
		return c.resume(p, m.MaxRows)
	}
	if err := c.checkHousekeeping(p.stmt.stmt); err != nil {
		c.refused(p.stmt.stmt, err)
		return false
	}
	if c.setLocalOutsideBlock(p.stmt.stmt) {
		p.ran = &proxy.Result{Tag: "SET"}
		return c.resume(p, m.MaxRows)
	}
	c.noteLocal(p.stmt.stmt)
	if p.stmt.answersItself() || p.stmt.stmt.CursorOp != nil {
		return c.executeOwn(p, m.MaxRows)
	}
	res, err := c.run(p.stmt.stmt, p.args)
	if err != nil {
		c.sendError(err)
		return false
	}
	c.deallocate(p.stmt.stmt)
	if res.Tag == "" && len(res.Columns) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return true
	}
	p.ran = res
	return c.resume(p, m.MaxRows)
}

// resume sends a portal's answer from where the last Execute stopped: at
// most maxRows rows (0: all) and PortalSuspended when it sent maxRows,
// else the rest and the command tag, as PostgreSQL does. The statement ran once,
// at the portal's first Execute: a later one reads what is left (no rows,
// SELECT 0, once it has all been sent); a portal of a statement that
// returns no rows cannot be run again (55000).
func (c *conn) resume(p *portal, maxRows uint32) bool {
	res := p.ran
	first := !p.resumed
	p.resumed = true
	if len(res.Columns) == 0 {
		if !first {
			c.sendError(pgerror.Errorf(pgerror.ObjectNotInPrerequisiteState, "portal cannot be run: it has run to completion"))
			return false
		}
		c.sendRows(res, p.resultFormats)
		return true
	}
	rows := res.Rows[p.sent:]
	if maxRows > 0 && uint32(len(rows)) > maxRows {
		rows = rows[:maxRows]
	}
	for _, row := range rows {
		c.be.Send(c.enc.dataRow(res.Columns, row, p.resultFormats))
	}
	p.sent += len(rows)
	if maxRows > 0 && uint32(len(rows)) == maxRows {
		// PostgreSQL stops at the limit without looking past it: a portal
		// whose last row this was is suspended, and the next Execute
		// completes it with no rows.
		c.be.Send(&pgproto3.PortalSuspended{})
	} else {
		tag := res.Tag
		if verb, _, ok := strings.Cut(tag, " "); ok && (verb == "SELECT" || verb == "FETCH") {
			tag = verb + " " + strconv.Itoa(len(rows)) // the rows of this Execute, as PostgreSQL counts them
		}
		c.be.Send(c.enc.commandComplete(tag))
	}
	if first && res.Notice != "" {
		c.sendNotice(res.Notice)
	}
	return true
}

// unchangedColumns refuses, before the statement runs, a prepared
// statement whose columns changed since it was described (SET
// countwall.confidence since Parse), as PostgreSQL refuses a cached plan
// whose result type changed; drivers then prepare it again. Refused here,
// nothing is charged or read, and the audit records no answer that the
// client would not have received.
func (c *conn) unchangedColumns(st *prepared) error {
	n := len(st.desc.Columns)
	if n == 0 {
		return nil
	}
	now, err := c.session.Describe(context.Background(), st.stmt)
	if err != nil || len(now.Columns) == n {
		return nil // a statement that no longer describes is refused by its run
	}
	return pgerror.Errorf(pgerror.FeatureNotSupported, "cached plan must not change result type")
}

// declaredTypes are the parameter types a Parse message declares.
func declaredTypes(oids []uint32) []pgtypes.OID {
	types := make([]pgtypes.OID, len(oids))
	for i, o := range oids {
		types[i] = pgtypes.OID(o)
	}
	return types
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
		return pgerror.Errorf(pgerror.ProtocolViolation, "bind message has %d %s but %d %s", len(codes), what, items, itemName)
	}
	for _, f := range codes {
		if f != 0 && f != 1 {
			return pgerror.Errorf(pgerror.ProtocolViolation, "unsupported format code: %d", f)
		}
	}
	return nil
}

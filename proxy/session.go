package proxy

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"countwall/ir"
	"countwall/mechanisms"
	"countwall/pgerror"
	"countwall/pgtypes"
	"countwall/proxy/state/release"
)

// ServerVersion is what `SELECT version()` and the server_version setting
// report: 15, the version whose catalog the schema discovery answers as
// (proxy/catalog). Clients choose their catalog queries by the version
// announced, so a client newer than 15 (psql 16 and 17) sends the queries
// it sends a PostgreSQL 15, which the catalog answers, and psql 15 prints
// no version-mismatch warning; psql warns only of a server newer than
// itself.
const ServerVersion = "15.0 (countwall)"

// ServerVersionNum is server_version_num, the form BI tools and drivers
// compare (PostgreSQL 15.0).
const ServerVersionNum = "150000"

// Session is one analyst's conversation with the Engine: it carries the
// analyst's name and the settings changed with SET. A Session is used by one
// connection at a time.
type Session struct {
	engine  *Engine
	analyst string
	// ended is closed when the engine ends the session: its analyst was
	// removed from the config by a reload.
	ended   chan struct{}
	endOnce sync.Once

	mu       sync.Mutex
	epsilon  float64 // 0 means the config default
	delta    float64
	hasDelta bool
	settings map[string]string // harmless client settings, for SHOW
	// defaults are the client settings the startup packet set: what a
	// setting the session has not SET (or has RESET) is.
	defaults map[string]string
}

// NewSession starts a session for an analyst the caller has authenticated.
// The caller closes it when the analyst leaves.
func (e *Engine) NewSession(analyst string) *Session {
	s := &Session{engine: e, analyst: analyst, settings: map[string]string{}, ended: make(chan struct{})}
	e.sessionsMu.Lock()
	e.sessions[s] = struct{}{}
	e.sessionsMu.Unlock()
	return s
}

// Analyst is the session's analyst.
func (s *Session) Analyst() string { return s.analyst }

// Close releases the session.
func (s *Session) Close() {
	s.engine.sessionsMu.Lock()
	delete(s.engine.sessions, s)
	s.engine.sessionsMu.Unlock()
}

// Done is closed when the engine has ended the session (a reload removed
// its analyst from the config); every statement is then refused with 57P01
// and a front end should close the connection.
func (s *Session) Done() <-chan struct{} { return s.ended }

func (s *Session) end() { s.endOnce.Do(func() { close(s.ended) }) }

// errTerminated is PostgreSQL's message for a session ended by the
// administrator.
var errTerminated = pgerror.Errorf(pgerror.AdminShutdown, "terminating connection due to administrator command")

// Exec runs one statement: Prepare and Execute at once. args are the
// values bound to $1..$n (nil elements are SQL NULL); nil for plain SQL.
func (s *Session) Exec(ctx context.Context, sql string, args []*string) (*Result, error) {
	return s.Execute(ctx, s.Prepare(sql), args)
}

// Execute runs a prepared statement with args bound to its $1..$n, and
// audits and logs it: every outcome, answer or refusal, under the
// statement's fingerprint.
func (s *Session) Execute(ctx context.Context, st *Statement, args []*string) (*Result, error) {
	start := time.Now()
	rt := s.engine.live.Load()
	s.engine.current(st, rt)
	a := s.answer(ctx, rt, st, args)
	res, err := a.res, publicError(a.err)
	rec := auditRecord{analyst: s.analyst, fingerprint: st.fingerprint, kind: a.kind, mechanism: rt.mech.Name(), charge: a.charge, err: err}
	if err == nil && a.kind == release.KindQuery {
		rec.released = releasedBy(st, args, a.types, res, a.query)
	}
	// Every statement's outcome is written here, once: an answer's row is
	// durable before the answer leaves.
	if aerr := s.engine.audit(ctx, rec); aerr != nil {
		// An answer whose audit row is not durable does not leave; its
		// charge (if any) stands, which errs on the safe side.
		res, err = nil, publicError(aerr)
		s.engine.logger.Error("audit log write failed; answer withheld", "analyst", s.analyst, "fingerprint", st.fingerprint, "err", aerr)
	}
	// Checked first: the line's arguments would be boxed even for a logger
	// that drops them, on every attack statement.
	if s.engine.logger.Enabled(ctx, slog.LevelInfo) {
		s.engine.logger.Info("statement", "analyst", s.analyst, "fingerprint", st.fingerprint, "kind", a.kind.String(),
			"outcome", outcome(err), "latency", time.Since(start))
	}
	s.engine.observe(a.kind, err, time.Since(start))
	return res.inSelectOrder(), err
}

// answer is what Execute sends and audits of one statement.
type answer struct {
	kind   release.Kind
	res    *Result
	charge mechanisms.Charge // what an answered query cost
	query  *release.Query    // an answered query's structured record
	types  []pgtypes.OID     // the type each parameter was read as
	err    error
}

// answer runs a statement: what it is, and its result or refusal. A
// statement refused before it is read as anything is invalid.
func (s *Session) answer(ctx context.Context, rt *runtime, st *Statement, args []*string) answer {
	select {
	case <-s.ended:
		return answer{kind: release.KindInvalid, err: errTerminated}
	default:
	}
	if err := s.engine.suspension(s.analyst); err != nil {
		return answer{kind: release.KindInvalid, err: err}
	}
	if st.reading == readCatalog {
		res, err := s.catalogQuery(ctx, st.text, args)
		return answer{kind: release.KindCatalog, res: res, err: err}
	}
	stmt, types, err := st.bind(args)
	if err != nil {
		return answer{kind: release.KindInvalid, err: err}
	}
	switch read := stmt.(type) {
	case *ir.Query:
		if st.reading == readExplain {
			res, err := s.explain(ctx, rt, read)
			return answer{kind: release.KindExplain, res: res, err: err}
		}
		a := s.query(ctx, rt, read, st.fingerprint)
		a.types = types
		return a
	case *ir.Set:
		res, err := s.set(rt, read)
		return answer{kind: release.KindSet, res: res, err: err}
	case *ir.Show:
		res, err := s.show(ctx, rt, read)
		return answer{kind: release.KindShow, res: res, err: err}
	case *ir.Chatter:
		res, err := s.chatter(read)
		return answer{kind: release.KindChatter, res: res, err: err}
	}
	return answer{kind: release.KindInvalid, err: pgerror.Errorf(pgerror.FeatureNotSupported, "statement is not supported")}
}

// Refused records a statement that a front end refused before it reached
// Execute (the extended protocol's Parse and Bind, a failed transaction
// block), so that the audit log holds every statement received.
func (s *Session) Refused(st *Statement, err error) {
	if err == nil {
		return
	}
	if pgerror.SQLState(err) == "" {
		err = publicError(err) // no SQLSTATE: recorded as the internal error the analyst saw
	}
	rt := s.engine.live.Load()
	fp := st.fingerprint
	if fp == "" {
		fp = s.engine.Fingerprint(st.SQL) // a statement the Engine did not prepare
	}
	rec := auditRecord{analyst: s.analyst, fingerprint: fp, kind: release.KindInvalid, mechanism: rt.mech.Name(), err: err}
	s.engine.audit(context.Background(), rec) //nolint:errcheck // a refusal is queued, never waited for
	s.engine.logger.Info("statement", "analyst", s.analyst, "fingerprint", fp, "kind", rec.kind.String(), "outcome", outcome(err))
	s.engine.observe(rec.kind, err, 0)
}

// publicError makes sure what reaches the analyst is a *pgerror.Error: the
// planner's and mechanisms' refusals pass through; anything else (an I/O
// error, a bug) is logged by the caller and replaced by a generic message so
// that no internal detail or data value leaks.
func publicError(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgerror.Error
	if errors.As(err, &pe) {
		return pe
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &pgerror.Error{Code: pgerror.QueryCanceled, Message: "canceling statement due to statement timeout or user request"}
	}
	return pgerror.Internal(err)
}

// outcome is how a statement's outcome is logged and audited: "ok", or the
// SQLSTATE the analyst was sent.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return string(pgerror.Public(err).Code)
}

package proxy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"countwall/ir"
	"countwall/mechanisms"
	"countwall/mechanisms/ledger"
	"countwall/pgerror"
	"countwall/planner"
	"countwall/planner/plan"
	"countwall/proxy/statedb"
)

// ServerVersion is what `SELECT version()` and the server_version setting report.
const ServerVersion = "16.0 (countwall)"

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

// clientSettings are the parameters drivers SET on connect. They are accepted
// and echoed by SHOW; none of them changes what is answered.
var clientSettings = map[string]string{
	"application_name":                    "",
	"extra_float_digits":                  "1",
	"datestyle":                           "ISO, MDY",
	"client_encoding":                     "UTF8",
	"timezone":                            "UTC",
	"search_path":                         "public",
	"statement_timeout":                   "0",
	"intervalstyle":                       "postgres",
	"client_min_messages":                 "notice",
	"standard_conforming_strings":         "on",
	"bytea_output":                        "hex",
	"lc_messages":                         "C",
	"default_transaction_isolation":       "read committed",
	"transaction_isolation":               "read committed",
	"idle_in_transaction_session_timeout": "0",
	"lock_timeout":                        "0",
	"server_encoding":                     "UTF8",
	"integer_datetimes":                   "on",
	"max_identifier_length":               "63",
}

// Exec runs one statement. args are the values bound to $1..$n by the
// extended protocol (nil elements are SQL NULL); nil for plain SQL.
func (s *Session) Exec(ctx context.Context, sql string, args []*string) (*Result, error) {
	start := time.Now()
	rt := s.engine.live.Load()
	fp := s.engine.Fingerprint(sql)
	var stmt ir.Statement
	var err error = errTerminated
	select {
	case <-s.ended:
	default:
		stmt, err = planner.Parse(sql, args, rt.catalog)
	}
	kind := "invalid"
	var res *Result
	var charge mechanisms.Charge
	audited := false // the answer's audit row was committed with its charge
	if err == nil {
		switch st := stmt.(type) {
		case *ir.Query:
			kind = "query"
			res, charge, audited, err = s.query(ctx, rt, st, fp)
		case *ir.Set:
			kind = "set"
			res, err = s.set(rt, st)
		case *ir.Show:
			kind = "show"
			res, err = s.show(ctx, rt, st)
		case *ir.Chatter:
			kind = "chatter"
			res, err = s.chatter(st)
		default:
			err = pgerror.Errorf(pgerror.FeatureNotSupported, "statement is not supported")
		}
	}
	err = publicError(err)
	// An answer already audited in its charge's transaction is not written
	// again; every other outcome is written here.
	if !audited || err != nil {
		if aerr := s.engine.audit(ctx, s.analyst, fp, kind, rt.mech.Name(), charge, err); aerr != nil {
			// An answer whose audit row is not durable does not leave; its
			// charge (if any) stands, which errs on the safe side.
			res, err = nil, publicError(aerr)
			s.engine.logger.Error("audit log write failed; answer withheld", "analyst", s.analyst, "fingerprint", fp, "err", aerr)
		}
	}
	s.engine.logger.Debug("statement", "analyst", s.analyst, "fingerprint", fp, "kind", kind,
		"outcome", outcome(err), "latency", time.Since(start))
	return res, err
}

// Fingerprint is the keyed fingerprint of a statement, for front ends'
// logs.
func (s *Session) Fingerprint(sql string) string { return s.engine.Fingerprint(sql) }

// Refused records a statement that a front end refused before it reached
// Exec (the extended protocol's Parse and Bind), so that the audit log holds
// every statement received.
func (s *Session) Refused(sql string, err error) {
	if err == nil {
		return
	}
	if pgerror.SQLState(err) == "" {
		err = publicError(err) // no SQLSTATE: recorded as the internal error the analyst saw
	}
	rt := s.engine.live.Load()
	s.engine.audit(context.Background(), s.analyst, s.engine.Fingerprint(sql), "invalid", rt.mech.Name(), mechanisms.Charge{}, err) //nolint:errcheck // a refusal is queued, never waited for
}

// Describe validates a statement without running it and says what it returns.
func (s *Session) Describe(ctx context.Context, sql string) (*Description, error) {
	select {
	case <-s.ended:
		return nil, errTerminated
	default:
	}
	rt := s.engine.live.Load()
	params, err := planner.DescribeParams(sql, rt.catalog)
	if err != nil {
		return nil, publicError(err)
	}
	d := &Description{Params: make([]ColumnType, len(params))}
	for i, p := range params {
		d.Params[i] = wireType(p)
	}
	// Bind NULL-free placeholders only to learn the statement's shape; a
	// statement without parameters is parsed as is.
	stmt, err := planner.Parse(sql, placeholderArgs(params), rt.catalog)
	if err != nil {
		return nil, publicError(err)
	}
	switch st := stmt.(type) {
	case *ir.Query:
		d.Columns = queryColumns(rt, st)
	case *ir.Show:
		d.Columns = showColumns(st.Name)
	case *ir.Chatter:
		if st.Kind == "version" || st.Kind == "current_setting" {
			d.Columns = []Column{{Name: st.Kind, Type: ColumnText}}
		}
	}
	return d, nil
}

// placeholderArgs makes a valid value of each parameter's type, so that a
// statement can be checked for shape before its real arguments arrive.
func placeholderArgs(types []ir.ColumnType) []*string {
	if len(types) == 0 {
		return nil
	}
	args := make([]*string, len(types))
	for i, t := range types {
		v := "0"
		if t == ir.TypeText {
			v = "x"
		}
		args[i] = &v
	}
	return args
}

func wireType(t ir.ColumnType) ColumnType {
	switch t {
	case ir.TypeInt:
		return ColumnInt8
	case ir.TypeReal:
		return ColumnFloat8
	default:
		return ColumnText
	}
}

func queryColumns(rt *runtime, q *ir.Query) []Column {
	cols := make([]Column, 0, len(q.GroupBy)+1)
	for _, g := range q.GroupBy {
		cols = append(cols, Column{Name: g, Type: ColumnText})
	}
	typ := ColumnInt8
	if rt.float {
		typ = ColumnFloat8
	}
	return append(cols, Column{Name: q.Alias, Type: typ})
}

// query answers a COUNT query. Everything that can refuse it runs before the
// protected data is read: the policy (already, in Parse), the GROUP BY
// domains, and the mechanism's price, which the ledger then charges durably.
// Only then does the backend read the data and the mechanism answer; a read
// that fails after the charge (a cancel, a timeout, an internal error) keeps
// its charge, which errs on the safe side. So no refusal, no charge and no
// refusal's timing depends on the rows.
//
// audited reports that the answer's audit row was committed in the same
// transaction as its charge, so it need not be written again.
func (s *Session) query(ctx context.Context, rt *runtime, q *ir.Query, fp string) (res *Result, charge mechanisms.Charge, audited bool, err error) {
	none := mechanisms.Charge{}
	table := rt.catalog.Tables[q.Table]
	if err := checkGroupDomains(table, q, rt.mech); err != nil {
		return nil, none, false, err
	}
	needs := rt.mech.Needs()
	if mechanisms.DropsLowCounts(rt.mech) {
		needs.GroupLimit = foundGroupsLimit
	}
	eps, delta := s.share(rt)
	req := &mechanisms.Request{Query: q, Table: table, Epsilon: eps, Delta: delta}
	if needs.Bound {
		if req.Bounds, err = plan.Bounds(table, q, needs); err != nil {
			return nil, none, false, err
		}
	}
	charge, err = mechanisms.Price(rt.mech, req)
	if err != nil {
		return nil, none, false, err
	}
	var notice string
	if charge.Kind != mechanisms.AccountingNone {
		if notice, audited, err = s.charge(ctx, rt, fp, charge); err != nil {
			return nil, none, false, err
		}
	}
	cells, err := s.engine.backend.Run(ctx, table, q, needs, s.engine.secret)
	if err != nil {
		return nil, charge, audited, err
	}
	req.Result = cells
	answers, answered, err := rt.mech.Answer(ctx, req)
	if err != nil {
		return nil, charge, audited, err
	}
	if answered != charge {
		return nil, charge, audited, fmt.Errorf("mechanism %s charged %+v for an answer priced at %+v", rt.mech.Name(), answered, charge)
	}
	if len(answers) != len(cells.Cells) {
		return nil, charge, audited, fmt.Errorf("mechanism %s answered %d cells of %d", rt.mech.Name(), len(answers), len(cells.Cells))
	}
	res = s.rows(rt, q, cells, answers, notice)
	maxGroups := table.Policy.MaxGroups
	if maxGroups <= 0 {
		maxGroups = ir.DefaultPolicy().MaxGroups
	}
	truncateGroups(res, maxGroups)
	return res, charge, audited, nil
}

// foundGroupsLimit bounds the groups a GROUP BY without declared domains may
// find under a mechanism that drops low counts, before it drops them: the
// memory and time of one statement. Reaching it is the one refusal that
// depends on groups the answer would not show (see the README).
const foundGroupsLimit = 1_000_000

// truncateGroups keeps the first max rows of a released GROUP BY in the
// answer's order (ORDER BY, else the group values'), saying so in a notice.
// Which rows are kept depends only on the rows the mechanism released, never
// on the groups it dropped.
func truncateGroups(res *Result, max int) {
	if max <= 0 || len(res.Rows) <= max {
		return
	}
	released := len(res.Rows)
	res.Rows, res.Suppressed = res.Rows[:max], res.Suppressed[:max]
	res.Tag = "SELECT " + strconv.Itoa(max)
	note := fmt.Sprintf("%d groups were released; the first %d in the answer's order are shown (max_groups)", released, max)
	if res.Notice != "" {
		note = res.Notice + "\n" + note
	}
	res.Notice = note
}

// charge records a priced statement's charge durably, with the answer's
// audit row in the same transaction where the ledger writes one.
func (s *Session) charge(ctx context.Context, rt *runtime, fp string, charge mechanisms.Charge) (notice string, audited bool, err error) {
	req := ledger.EntryOf(s.analyst, rt.mech.Name(), fp, charge)
	if !s.engine.queueAnswerAudit {
		entry := answeredEntry(s.analyst, fp, "query", rt.mech.Name(), charge)
		req.Within = func(ctx context.Context, tx *sql.Conn) error {
			audited = true
			return statedb.InsertAudit(ctx, tx, entry)
		}
	}
	bal, err := s.engine.budget.Charge(ctx, req)
	if err != nil {
		return "", false, err
	}
	return bal.Notice(charge), audited, nil
}

// rows builds the result of an answered query: a row per answered cell.
func (s *Session) rows(rt *runtime, q *ir.Query, cells *ir.Result, answers []mechanisms.Answer, notice string) *Result {
	res := &Result{Columns: queryColumns(rt, q), Notice: notice}
	floatOut := res.Columns[len(res.Columns)-1].Type == ColumnFloat8
	for i, a := range answers {
		if a.Dropped {
			continue
		}
		row := make([]Value, 0, len(q.GroupBy)+1)
		for _, g := range cells.Cells[i].Group {
			row = append(row, Value{Null: g.Null, Text: g.Text})
		}
		row = append(row, answerValue(a, floatOut))
		res.Rows = append(res.Rows, row)
		res.Suppressed = append(res.Suppressed, a.Suppressed)
	}
	res.Tag = "SELECT " + strconv.Itoa(len(res.Rows))
	return res
}

// checkGroupDomains refuses a GROUP BY over a column without a declared
// public domain unless the mechanism drops low-count groups: otherwise the
// rows that come back would reveal which groups exist.
func checkGroupDomains(t *ir.Table, q *ir.Query, m mechanisms.Mechanism) error {
	if mechanisms.DropsLowCounts(m) {
		return nil
	}
	for _, g := range q.GroupBy {
		if t.Columns[g].Domain == nil {
			return &pgerror.Error{Code: pgerror.FeatureNotSupported,
				Message: fmt.Sprintf("GROUP BY %q needs a declared public domain under the %s mechanism", g, m.Name()),
				Hint:    fmt.Sprintf("declare tables.%s.domains.%s in the config (categories or an integer range), or use a mechanism that drops low counts (layered, or suppress with mode drop)", t.Name, g)}
		}
	}
	return nil
}

func answerValue(a mechanisms.Answer, floatOut bool) Value {
	switch {
	case floatOut && a.IsFloat:
		return Value{Float: a.Float}
	case floatOut:
		return Value{Float: float64(a.Int)}
	case a.IsFloat:
		return Value{Int: int64(math.Round(a.Float))}
	default:
		return Value{Int: a.Int}
	}
}

// share is the session's per-query budget share.
func (s *Session) share(rt *runtime) (eps, delta float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	eps, delta = rt.cfg.Budget.Epsilon.Default, rt.cfg.Budget.Delta.Default
	if s.epsilon > 0 {
		eps = s.epsilon
	}
	if s.hasDelta {
		delta = s.delta
	}
	return eps, delta
}

func (s *Session) set(rt *runtime, st *ir.Set) (*Result, error) {
	done := &Result{Tag: "SET"}
	switch st.Name {
	case "epsilon", "delta":
		r := rt.cfg.Budget.Epsilon
		if st.Name == "delta" {
			r = rt.cfg.Budget.Delta
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(st.Value), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, pgerror.Errorf(pgerror.InvalidParameterValue, "SET %s needs a number", st.Name)
		}
		if v < r.Min || v > r.Max {
			return nil, &pgerror.Error{Code: pgerror.InvalidParameterValue,
				Message: fmt.Sprintf("%s %g is outside the allowed range [%g, %g]", st.Name, v, r.Min, r.Max)}
		}
		// A share the mechanism cannot use is refused here, not at every
		// query that would then be refused.
		eps, delta := s.share(rt)
		if st.Name == "epsilon" {
			eps = v
		} else {
			delta = v
		}
		if err := mechanisms.CheckShare(rt.mech, eps, delta); err != nil {
			return nil, &pgerror.Error{Code: pgerror.InvalidParameterValue,
				Message: fmt.Sprintf("SET %s = %g: %s", st.Name, v, err.Error()),
				Hint:    fmt.Sprintf("The %s mechanism cannot use this share; the allowed range is [%g, %g].", rt.mech.Name(), r.Min, r.Max)}
		}
		s.mu.Lock()
		if st.Name == "epsilon" {
			s.epsilon = v
		} else {
			s.delta, s.hasDelta = v, true
		}
		s.mu.Unlock()
		return done, nil
	}
	if st.Name == "standard_conforming_strings" && !settingIsOn(st.Value) {
		// The lexer always reads strings with it on; accepting off would let
		// a client that escapes a quote as \' believe it is safe.
		return nil, &pgerror.Error{Code: pgerror.FeatureNotSupported,
			Message: fmt.Sprintf("standard_conforming_strings cannot be set to %q: countwall reads every string with it on", st.Value),
			Hint:    "Escape a quote in a string by doubling it ('it''s')."}
	}
	if _, ok := clientSettings[st.Name]; ok {
		s.mu.Lock()
		s.settings[st.Name] = st.Value
		s.mu.Unlock()
		return done, nil
	}
	return nil, &pgerror.Error{Code: pgerror.UndefinedObject,
		Message: fmt.Sprintf("unrecognized configuration parameter %q", st.Name),
		Hint:    "countwall accepts SET epsilon and SET delta, and the usual client settings"}
}

// settingIsOn reads a boolean setting's value as PostgreSQL does.
func settingIsOn(v string) bool {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), `'"`)) {
	case "on", "true", "yes", "1", "t", "y":
		return true
	}
	return false
}

func showColumns(name string) []Column {
	if name == "budget" {
		return []Column{
			{Name: "kind", Type: ColumnText},
			{Name: "epsilon_spent", Type: ColumnFloat8}, {Name: "epsilon_remaining", Type: ColumnFloat8},
			{Name: "delta_spent", Type: ColumnFloat8}, {Name: "delta_remaining", Type: ColumnFloat8},
			{Name: "rho_spent", Type: ColumnFloat8},
		}
	}
	return []Column{{Name: name, Type: ColumnText}}
}

func (s *Session) show(ctx context.Context, rt *runtime, st *ir.Show) (*Result, error) {
	one := func(v string) *Result {
		return &Result{Columns: showColumns(st.Name), Rows: [][]Value{{{Text: v}}}, Suppressed: []bool{false}, Tag: "SHOW"}
	}
	switch st.Name {
	case "budget":
		bals, err := s.engine.budget.Balances(ctx, s.analyst)
		if err != nil {
			return nil, err
		}
		res := &Result{Columns: showColumns("budget"), Tag: "SHOW"}
		for _, b := range bals {
			res.Rows = append(res.Rows, []Value{{Text: string(b.Kind)},
				{Float: b.EpsilonSpent}, {Float: b.EpsilonRemaining()}, {Float: b.DeltaSpent}, {Float: b.DeltaRemaining()}, {Float: b.RhoSpent}})
			res.Suppressed = append(res.Suppressed, false)
		}
		return res, nil
	case "epsilon", "delta":
		eps, delta := s.share(rt)
		if st.Name == "epsilon" {
			return one(strconv.FormatFloat(eps, 'g', -1, 64)), nil
		}
		return one(strconv.FormatFloat(delta, 'g', -1, 64)), nil
	case "mechanism":
		return showMechanism(rt), nil
	case "server_version":
		return one(ServerVersion), nil
	}
	if def, ok := clientSettings[st.Name]; ok {
		s.mu.Lock()
		v, set := s.settings[st.Name]
		s.mu.Unlock()
		if !set {
			v = def
		}
		return one(v), nil
	}
	return nil, pgerror.Errorf(pgerror.UndefinedObject, "unrecognized configuration parameter %q", st.Name)
}

func (s *Session) chatter(st *ir.Chatter) (*Result, error) {
	switch st.Kind {
	case "version":
		return &Result{Columns: []Column{{Name: "version", Type: ColumnText}},
			Rows: [][]Value{{{Text: "PostgreSQL " + ServerVersion}}}, Suppressed: []bool{false}, Tag: "SELECT 1"}, nil
	case "current_setting":
		v, ok := clientSettings[st.Value]
		if st.Value == "server_version" {
			v, ok = ServerVersion, true
		}
		if !ok {
			return nil, pgerror.Errorf(pgerror.UndefinedObject, "unrecognized configuration parameter %q", st.Value)
		}
		s.mu.Lock()
		if set, isSet := s.settings[st.Value]; isSet {
			v = set
		}
		s.mu.Unlock()
		return &Result{Columns: []Column{{Name: "current_setting", Type: ColumnText}},
			Rows: [][]Value{{{Text: v}}}, Suppressed: []bool{false}, Tag: "SELECT 1"}, nil
	case "begin":
		return &Result{Tag: "BEGIN"}, nil
	case "commit":
		return &Result{Tag: "COMMIT"}, nil
	case "rollback":
		return &Result{Tag: "ROLLBACK"}, nil
	case "discard":
		s.mu.Lock()
		s.settings = map[string]string{}
		s.epsilon, s.delta, s.hasDelta = 0, 0, false
		s.mu.Unlock()
		return &Result{Tag: "DISCARD ALL"}, nil
	case "empty":
		return &Result{}, nil
	}
	return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "statement is not supported")
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
	return &internalError{cause: err}
}

// internalError hides its cause from the analyst but keeps it for logs.
type internalError struct{ cause error }

func (e *internalError) Error() string {
	return "internal error; the administrator can find details in the log"
}
func (e *internalError) SQLState() string { return pgerror.InternalError }
func (e *internalError) Unwrap() error    { return e.cause }

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if code := pgerror.SQLState(err); code != "" {
		return code
	}
	return pgerror.InternalError
}

// answeredEntry is the audit entry of an answer and its charge.
func answeredEntry(analyst, fp, kind, mech string, charge mechanisms.Charge) statedb.AuditEntry {
	e := statedb.AuditEntry{Analyst: analyst, Fingerprint: fp, Kind: kind, Mechanism: mech, Outcome: statedb.OutcomeAnswered}
	if charge.Kind != mechanisms.AccountingNone {
		e.ChargeKind, e.Epsilon, e.Delta = string(charge.Kind), charge.Epsilon, charge.Delta
	}
	return e
}

// audit records a statement's outcome. A refusal is queued; an answer's
// entry is committed before audit returns (group commit with the answers of
// other sessions), so that a crash never leaves the audit showing fewer
// answers than clients received.
func (e *Engine) audit(ctx context.Context, analyst, fp, kind, mech string, charge mechanisms.Charge, err error) error {
	entry := answeredEntry(analyst, fp, kind, mech, charge)
	if err != nil {
		entry.ChargeKind, entry.Epsilon, entry.Delta = "", 0, 0
		entry.Outcome, entry.SQLState, entry.Reason = statedb.OutcomeRefused, outcome(err), err.Error()
		var ie *internalError
		if errors.As(err, &ie) {
			e.logger.Error("internal error", "analyst", analyst, "fingerprint", fp, "err", ie.cause)
		}
		e.state.Audit(entry)
		return nil
	}
	if e.queueAnswerAudit {
		e.state.Audit(entry)
		return nil
	}
	// The wait is not cut short by the statement's deadline: the entry is
	// already on its way to disk, and the answer must not leave before it.
	return e.state.AuditDurable(context.WithoutCancel(ctx), entry)
}

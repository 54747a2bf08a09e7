package state

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
)

// interned remembers the ids of what the audit writes once and refers to
// by id (contexts, shapes, strings), keyed by the content itself, so that a
// row whose context and shape were seen before costs one insert and no
// hashing. Ids learnt in a transaction are kept only once it commits.
type interned[K comparable] struct {
	mu    sync.Mutex
	ids   map[K]int64
	bytes int // what the keys hold, as weighed when kept
}

// maxInterned and maxInternedBytes bound the cache, in entries and in the
// bytes its keys hold (an analyst's long statements of many shapes must
// not grow it without end); past either the cache starts afresh.
const (
	maxInterned      = 1 << 16
	maxInternedBytes = 16 << 20
)

func (c *interned[K]) lookup(k K) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.ids[k]
	return id, ok
}

// keep adds the ids learnt in a committed transaction; weigh is how many
// bytes a key holds.
func (c *interned[K]) keep(learnt map[K]int64, weigh func(K) int) {
	if len(learnt) == 0 {
		return
	}
	n := 0
	for k := range learnt {
		n += weigh(k)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil || len(c.ids)+len(learnt) > maxInterned || c.bytes+n > maxInternedBytes {
		c.ids, c.bytes = map[K]int64{}, 0
	}
	for k, id := range learnt {
		c.ids[k] = id
	}
	c.bytes += n
}

func stringBytes(s string) int { return len(s) + 16 }

func (k contextKey) bytes() int {
	return len(k.analyst) + len(k.kind) + len(k.mechanism) + len(k.outcome) + len(k.sqlState) + len(k.reason) + len(k.chargeKind) + 136
}

// contextKey is an entry's context as the cache knows it: the fields that
// repeat from row to row, the numbers by their bits, so that two contexts
// the stored hash tells apart (0 and -0) stay apart here.
type contextKey struct {
	analyst, kind, mechanism, outcome, sqlState, reason, chargeKind string
	epsilon, delta, rho                                             uint64
}

func (e AuditEntry) contextKey() contextKey {
	return contextKey{e.Analyst, string(e.Kind), e.Mechanism, string(e.Outcome), e.SQLState, e.Reason, e.ChargeKind,
		math.Float64bits(e.Epsilon), math.Float64bits(e.Delta), math.Float64bits(e.Rho)}
}

// contentHash keys an interned value in the database: the first 8 bytes of
// SHA-256 of its parts, each followed by a zero byte.
func contentHash(parts ...string) int64 {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return int64(binary.BigEndian.Uint64(h.Sum(nil)[:8]))
}

func (e AuditEntry) contextParts() []string {
	parts := []string{e.Analyst, string(e.Kind), e.Mechanism, string(e.Outcome), e.SQLState, e.Reason, e.ChargeKind,
		fmt.Sprint(e.Epsilon), fmt.Sprint(e.Delta)}
	if e.Rho != 0 { // contexts without rho keep the hash they had before it was kept
		parts = append(parts, fmt.Sprint(e.Rho))
	}
	return parts
}

// auditStmts are the audit writer's statements inside one transaction.
type auditStmts struct {
	row, rows, ctxInsert, ctxSelect, shapeInsert, shapeSelect, textInsert, textSelect execer
}

type execer interface {
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, args ...any) *sql.Row
}

// auditTx writes rows inside one transaction, interning as it goes.
type auditTx struct {
	s           *DB
	st          auditStmts
	ctxLearnt   map[contextKey]int64
	shapeLearnt map[string]int64
	textLearnt  map[string]int64
	textRef     textRef
}

func newAuditTx(s *DB, st auditStmts) *auditTx {
	w := &auditTx{s: s, st: st}
	w.textRef = func(text string) (int64, error) { return w.textID(context.Background(), text) }
	return w
}

// kept makes the ids learnt in a committed transaction known.
func (w *auditTx) kept() {
	w.s.contexts.keep(w.ctxLearnt, contextKey.bytes)
	w.s.shapes.keep(w.shapeLearnt, stringBytes)
	w.s.texts.keep(w.textLearnt, stringBytes)
}

// internedID is the id of k if this transaction or a committed one wrote it.
func internedID[K comparable](cache *interned[K], learnt map[K]int64, k K) (int64, bool) {
	if id, ok := learnt[k]; ok {
		return id, true
	}
	return cache.lookup(k)
}

// insertInterned writes a value not known to be written, under its content
// hash, and reads back its id (that of the row another writer put there
// first, if one did).
func insertInterned[K comparable](ctx context.Context, learnt *map[K]int64, k K, hash int64, insert, sel execer, args ...any) (int64, error) {
	if _, err := insert.ExecContext(ctx, append([]any{hash}, args...)...); err != nil {
		return 0, err
	}
	var id int64
	if err := sel.QueryRowContext(ctx, hash).Scan(&id); err != nil {
		return 0, err
	}
	if *learnt == nil {
		*learnt = map[K]int64{}
	}
	(*learnt)[k] = id
	return id, nil
}

func (w *auditTx) contextID(ctx context.Context, e AuditEntry) (int64, error) {
	k := e.contextKey()
	if id, ok := internedID(&w.s.contexts, w.ctxLearnt, k); ok {
		return id, nil
	}
	return insertInterned(ctx, &w.ctxLearnt, k, contentHash(e.contextParts()...), w.st.ctxInsert, w.st.ctxSelect,
		e.Analyst, string(e.Kind), e.Mechanism, string(e.Outcome), e.SQLState, e.Reason, e.ChargeKind, e.Epsilon, e.Delta, e.Rho)
}

func (w *auditTx) shapeID(ctx context.Context, shape string) (int64, error) {
	if id, ok := internedID(&w.s.shapes, w.shapeLearnt, shape); ok {
		return id, nil
	}
	return insertInterned(ctx, &w.shapeLearnt, strings.Clone(shape), contentHash(shape), w.st.shapeInsert, w.st.shapeSelect, shape)
}

// textID interns a string constant; the cache keeps its own copy, never
// the statement the constant was read from.
func (w *auditTx) textID(ctx context.Context, text string) (int64, error) {
	if id, ok := internedID(&w.s.texts, w.textLearnt, text); ok {
		return id, nil
	}
	return insertInterned(ctx, &w.textLearnt, strings.Clone(text), contentHash(text), w.st.textInsert, w.st.textSelect, text)
}

// appendRow appends e's audit_log row (insertAuditRow's arguments) to
// args, interning its context, shape and strings.
func (w *auditTx) appendRow(ctx context.Context, args []any, e AuditEntry) ([]any, error) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	ctxID, err := w.contextID(ctx, e)
	if err != nil {
		return args, err
	}
	var shape any
	if e.Shape != "" {
		id, err := w.shapeID(ctx, e.Shape)
		if err != nil {
			return args, err
		}
		shape = id
	}
	constants, err := encodeConstants(e.Constants, w.textRef)
	if err != nil {
		return args, err
	}
	query, err := encodeQuery(e.Query, e.Constants, w.textRef)
	if err != nil {
		return args, err
	}
	fp, fpText := rowFingerprint(e)
	return append(args, e.At.UnixMicro(), ctxID, fp, fpText, shape,
		nullBlob(constants), nullBlob(encodeCells(e.Cells)), nullBlob(query)), nil
}

// auditQueries are the writer's statements, prepared once.
var auditQueries = []string{insertAuditRow, insertAuditRows, insertAuditContext, selectAuditContext, insertAuditShape, selectAuditShape, insertAuditText, selectAuditText}

// preparedAudit are the writer's statements prepared on one handle.
type preparedAudit map[string]*sql.Stmt

// preparer is a *sql.DB or a *sql.Conn.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// prepareAudit prepares queries on db.
func prepareAudit(ctx context.Context, db preparer, queries []string) (preparedAudit, error) {
	out := preparedAudit{}
	for _, q := range queries {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			out.close() //nolint:errcheck // the prepare's error is what matters
			return nil, fmt.Errorf("preparing the audit log's statements: %w", err)
		}
		out[q] = st
	}
	return out, nil
}

func (p preparedAudit) close() error {
	var err error
	for _, st := range p {
		if e := st.Close(); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// stmts are the writer's statements, each made a transaction's by in
// (nil: used as they are, on the connection they were prepared on).
func (p preparedAudit) stmts(in func(*sql.Stmt) *sql.Stmt) auditStmts {
	st := func(q string) execer {
		if in == nil {
			return stmtExecer{p[q]}
		}
		return stmtExecer{in(p[q])}
	}
	return auditStmts{row: st(insertAuditRow), rows: st(insertAuditRows), ctxInsert: st(insertAuditContext), ctxSelect: st(selectAuditContext),
		shapeInsert: st(insertAuditShape), shapeSelect: st(selectAuditShape), textInsert: st(insertAuditText), textSelect: st(selectAuditText)}
}

// writeAll writes the batch's entries in the transaction, in order:
// auditRowsPerInsert rows a statement while that many are left, then one
// a statement. A row is a statement execution's worth of work in SQLite's
// VM and in database/sql; at attack scale the one-row INSERT was most of
// the writer's time.
func (w *auditTx) writeAll(ctx context.Context, batch []AuditEntry) error {
	args := make([]any, 0, auditRowArgs*auditRowsPerInsert)
	for _, e := range batch {
		var err error
		if args, err = w.appendRow(ctx, args, e); err != nil {
			return fmt.Errorf("writing audit log: %w", err)
		}
		if len(args) == cap(args) {
			if _, err := w.st.rows.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("writing audit log: %w", err)
			}
			args = args[:0]
		}
	}
	for ; len(args) > 0; args = args[auditRowArgs:] {
		if _, err := w.st.row.ExecContext(ctx, args[:auditRowArgs]...); err != nil {
			return fmt.Errorf("writing audit log: %w", err)
		}
	}
	return nil
}

// stmtExecer adapts a *sql.Stmt to execer.
type stmtExecer struct{ st *sql.Stmt }

func (x stmtExecer) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return x.st.ExecContext(ctx, args...)
}

func (x stmtExecer) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return x.st.QueryRowContext(ctx, args...)
}

// writeAudit writes a batch in one transaction: on SQLite through the
// writer's own connection (auditConn), on PostgreSQL in a transaction of
// the pool.
func (s *DB) writeAudit(batch []AuditEntry) error {
	if s.auditConn != nil {
		return s.auditConn.write(s, batch)
	}
	ctx := context.Background()
	tx, err := s.audit.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("writing audit log: %w", err)
	}
	defer tx.Rollback()
	if s.auditSync == AuditSyncNormal {
		if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return fmt.Errorf("writing audit log: %w", err)
		}
	}
	w := newAuditTx(s, s.auditPrepared.stmts(func(st *sql.Stmt) *sql.Stmt { return tx.StmtContext(ctx, st) }))
	if err := w.writeAll(ctx, batch); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing audit log: %w", err)
	}
	w.kept()
	return nil
}

package state

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"
)

// The audit log is three tables. audit_log has one row per statement: its
// time (microseconds since 1970), its context, its fingerprint and, for an
// answered query, its shape, its constants and its released cells.
// audit_context interns what repeats from row to row (analyst, kind,
// mechanism, outcome, SQLSTATE, reason, charge), audit_shape the statement
// shapes, audit_text the longer string constants; each is written once and
// referenced by id. Both are keyed by a
// hash of their content so that the unique index stays small however long
// a shape is (PostgreSQL refuses long index rows).
const auditSchema = `
CREATE TABLE IF NOT EXISTS audit_context (
	id          INTEGER PRIMARY KEY,
	hash        BIGINT NOT NULL UNIQUE,
	analyst     TEXT NOT NULL,
	kind        TEXT NOT NULL,
	mechanism   TEXT NOT NULL,
	outcome     TEXT NOT NULL,
	sqlstate    TEXT NOT NULL,
	reason      TEXT NOT NULL,
	charge_kind TEXT NOT NULL,
	epsilon     REAL NOT NULL,
	delta       REAL NOT NULL,
	rho         REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS audit_shape (
	id    INTEGER PRIMARY KEY,
	hash  BIGINT NOT NULL UNIQUE,
	shape TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_text (
	id    INTEGER PRIMARY KEY,
	hash  BIGINT NOT NULL UNIQUE,
	text  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_log (
	id          INTEGER PRIMARY KEY,
	at          BIGINT NOT NULL,
	context     BIGINT NOT NULL,
	fingerprint BIGINT,
	fp_text     TEXT,
	shape       BIGINT,
	constants   BLOB,
	cells       BLOB
);`

const (
	insertAuditRow     = `INSERT INTO audit_log (at, context, fingerprint, fp_text, shape, constants, cells) VALUES (?, ?, ?, ?, ?, ?, ?)`
	insertAuditContext = `INSERT OR IGNORE INTO audit_context (hash, analyst, kind, mechanism, outcome, sqlstate, reason, charge_kind, epsilon, delta, rho) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	selectAuditContext = `SELECT id FROM audit_context WHERE hash = ?`
	insertAuditShape   = `INSERT OR IGNORE INTO audit_shape (hash, shape) VALUES (?, ?)`
	selectAuditShape   = `SELECT id FROM audit_shape WHERE hash = ?`
	insertAuditText    = `INSERT OR IGNORE INTO audit_text (hash, text) VALUES (?, ?)`
	selectAuditText    = `SELECT id FROM audit_text WHERE hash = ?`
)

// interned remembers the ids of contexts and shapes already written, so
// that a row costs one insert. Ids learnt in a transaction are kept only
// once it commits.
type interned struct {
	mu  sync.Mutex
	ids map[int64]int64 // content hash -> id
}

// maxInterned bounds the cache; past it the cache starts afresh.
const maxInterned = 1 << 16

func (c *interned) lookup(hash int64) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.ids[hash]
	return id, ok
}

func (c *interned) keep(learnt map[int64]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil || len(c.ids)+len(learnt) > maxInterned {
		c.ids = map[int64]int64{}
	}
	for h, id := range learnt {
		c.ids[h] = id
	}
}

// contentHash keys an interned value: the first 8 bytes of SHA-256 of its
// parts, each followed by a zero byte.
func contentHash(parts ...string) int64 {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return int64(binary.BigEndian.Uint64(h.Sum(nil)[:8]))
}

func (e AuditEntry) contextParts() []string {
	parts := []string{e.Analyst, e.Kind, e.Mechanism, e.Outcome, e.SQLState, e.Reason, e.ChargeKind,
		fmt.Sprint(e.Epsilon), fmt.Sprint(e.Delta)}
	if e.Rho != 0 { // contexts without rho keep the hash they had before it was kept
		parts = append(parts, fmt.Sprint(e.Rho))
	}
	return parts
}

// auditStmts are the audit writer's statements inside one transaction.
type auditStmts struct {
	row, ctxInsert, ctxSelect, shapeInsert, shapeSelect, textInsert, textSelect execer
}

type execer interface {
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, args ...any) *sql.Row
}

// auditTx writes rows inside one transaction, interning as it goes.
type auditTx struct {
	s           *DB
	st          auditStmts
	ctxLearnt   map[int64]int64
	shapeLearnt map[int64]int64
	textLearnt  map[int64]int64
}

func newAuditTx(s *DB, st auditStmts) *auditTx {
	return &auditTx{s: s, st: st, ctxLearnt: map[int64]int64{}, shapeLearnt: map[int64]int64{}, textLearnt: map[int64]int64{}}
}

// kept makes the ids learnt in a committed transaction known.
func (w *auditTx) kept() {
	w.s.contexts.keep(w.ctxLearnt)
	w.s.shapes.keep(w.shapeLearnt)
	w.s.texts.keep(w.textLearnt)
}

func (w *auditTx) intern(ctx context.Context, cache *interned, learnt map[int64]int64, hash int64, insert, sel execer, args ...any) (int64, error) {
	if id, ok := learnt[hash]; ok {
		return id, nil
	}
	if id, ok := cache.lookup(hash); ok {
		return id, nil
	}
	if _, err := insert.ExecContext(ctx, append([]any{hash}, args...)...); err != nil {
		return 0, err
	}
	var id int64
	if err := sel.QueryRowContext(ctx, hash).Scan(&id); err != nil {
		return 0, err
	}
	learnt[hash] = id
	return id, nil
}

func (w *auditTx) write(ctx context.Context, e AuditEntry) error {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	p := e.contextParts()
	ctxID, err := w.intern(ctx, &w.s.contexts, w.ctxLearnt, contentHash(p...), w.st.ctxInsert, w.st.ctxSelect,
		e.Analyst, e.Kind, e.Mechanism, e.Outcome, e.SQLState, e.Reason, e.ChargeKind, e.Epsilon, e.Delta, e.Rho)
	if err != nil {
		return err
	}
	var shape any
	if e.Shape != "" {
		id, err := w.intern(ctx, &w.s.shapes, w.shapeLearnt, contentHash(e.Shape), w.st.shapeInsert, w.st.shapeSelect, e.Shape)
		if err != nil {
			return err
		}
		shape = id
	}
	constants, err := encodeConstants(e.Constants, func(text string) (int64, error) {
		return w.intern(ctx, &w.s.texts, w.textLearnt, contentHash(text), w.st.textInsert, w.st.textSelect, text)
	})
	if err != nil {
		return err
	}
	fp, fpText := packFingerprint(e.Fingerprint)
	_, err = w.st.row.ExecContext(ctx, e.At.UnixMicro(), ctxID, fp, fpText, shape,
		nullBlob(constants), nullBlob(encodeCells(e.Cells)))
	return err
}

// packFingerprint stores a fingerprint (16 hex digits) as an integer; any
// other text is kept as text.
func packFingerprint(fp string) (num, text any) {
	if b, err := hex.DecodeString(fp); err == nil && len(b) == 8 {
		return int64(binary.BigEndian.Uint64(b)), nil
	}
	return nil, fp
}

func unpackFingerprint(num sql.NullInt64, text sql.NullString) string {
	if num.Valid {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(num.Int64))
		return hex.EncodeToString(b[:])
	}
	return text.String
}

func nullBlob(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// auditStatements prepares the writer's statements on the audit handle.
func prepareAudit(ctx context.Context, db *sql.DB) (map[string]*sql.Stmt, error) {
	out := map[string]*sql.Stmt{}
	for _, q := range []string{insertAuditRow, insertAuditContext, selectAuditContext, insertAuditShape, selectAuditShape, insertAuditText, selectAuditText} {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			for _, p := range out {
				p.Close()
			}
			return nil, fmt.Errorf("preparing the audit log's statements: %w", err)
		}
		out[q] = st
	}
	return out, nil
}

// writeAudit writes a batch in one transaction.
func (s *DB) writeAudit(batch []AuditEntry) error {
	ctx := context.Background()
	tx, err := s.audit.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("writing audit log: %w", err)
	}
	defer tx.Rollback()
	if s.postgres && s.auditSync == AuditSyncNormal {
		if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return fmt.Errorf("writing audit log: %w", err)
		}
	}
	stmt := func(q string) *sql.Stmt { return tx.StmtContext(ctx, s.auditPrepared[q]) }
	w := newAuditTx(s, auditStmts{
		row: stmtExecer{stmt(insertAuditRow)}, ctxInsert: stmtExecer{stmt(insertAuditContext)}, ctxSelect: stmtExecer{stmt(selectAuditContext)},
		shapeInsert: stmtExecer{stmt(insertAuditShape)}, shapeSelect: stmtExecer{stmt(selectAuditShape)},
		textInsert: stmtExecer{stmt(insertAuditText)}, textSelect: stmtExecer{stmt(selectAuditText)}})
	for _, e := range batch {
		if err := w.write(ctx, e); err != nil {
			return fmt.Errorf("writing audit log: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing audit log: %w", err)
	}
	w.kept()
	return nil
}

// stmtExecer adapts a *sql.Stmt (or a *sql.Tx's query text) to execer.
type stmtExecer struct{ st *sql.Stmt }

func (x stmtExecer) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return x.st.ExecContext(ctx, args...)
}

func (x stmtExecer) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return x.st.QueryRowContext(ctx, args...)
}

// connExecer runs a query text on a connection holding a transaction,
// for the migration.
type connExecer struct {
	conn *sql.Conn
	q    string
}

func (x connExecer) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return x.conn.ExecContext(ctx, x.q, args...)
}

func (x connExecer) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return x.conn.QueryRowContext(ctx, x.q, args...)
}

// migrateAudit creates the audit tables and moves the rows of the audit
// table of earlier versions (one wide row per statement) into them, once.
// The move runs under the ledger's write lock (BEGIN IMMEDIATE; on
// PostgreSQL its advisory lock) and looks again for the old table inside
// it, so that instances starting together move the rows once.
func (s *DB) migrateAudit(ctx context.Context) error {
	if _, err := s.sql.ExecContext(ctx, auditSchema); err != nil {
		return fmt.Errorf("creating audit tables: %w", err)
	}
	// audit_context kept no rho before gaussian's zCDP charges were audited.
	if err := addRhoColumn(ctx, s.sql, "audit_context"); err != nil {
		return err
	}
	old, err := tableExists(ctx, s.sql, "audit")
	if err != nil || !old {
		return err
	}
	cols, err := oldAuditColumns(ctx, s.sql)
	if err != nil {
		return err
	}
	conn, err := s.sql.Conn(ctx)
	if err != nil {
		return fmt.Errorf("moving the old audit log: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("moving the old audit log: %w", err)
	}
	w := newAuditTx(s, auditStmts{
		row: connExecer{conn, insertAuditRow}, ctxInsert: connExecer{conn, insertAuditContext}, ctxSelect: connExecer{conn, selectAuditContext},
		shapeInsert: connExecer{conn, insertAuditShape}, shapeSelect: connExecer{conn, selectAuditShape},
		textInsert: connExecer{conn, insertAuditText}, textSelect: connExecer{conn, selectAuditText}})
	if err := s.moveOldAudit(ctx, conn, w, cols); err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK") //nolint:errcheck // the move's error is what matters
		return fmt.Errorf("moving the old audit log: %w", err)
	}
	if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		return fmt.Errorf("moving the old audit log: %w", err)
	}
	w.kept()
	return nil
}

// oldAuditColumns is what to read of the old table: the charge columns
// came late, and a table from before them reads as charged nothing.
func oldAuditColumns(ctx context.Context, db *sql.DB) (string, error) {
	cols := "at, analyst, fingerprint, kind, mechanism, outcome, sqlstate, reason"
	for _, c := range []string{"charge_kind", "epsilon", "delta"} {
		has, err := columnExists(ctx, db, "audit", c)
		if err != nil {
			return "", err
		}
		switch {
		case has:
			cols += ", " + c
		case c == "charge_kind":
			cols += ", ''"
		default:
			cols += ", 0"
		}
	}
	return cols, nil
}

// moveOldAudit copies the old table's rows, if it is still there, and
// drops it, inside the caller's transaction on conn.
func (s *DB) moveOldAudit(ctx context.Context, conn *sql.Conn, w *auditTx, cols string) error {
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'audit'`
	if s.postgres {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'audit'`
	}
	var n int
	if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil || n == 0 {
		return err // another instance moved it
	}
	rows, err := conn.QueryContext(ctx, `SELECT `+cols+` FROM audit ORDER BY id`)
	if err != nil {
		return err
	}
	var entries []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var at string
		if err := rows.Scan(&at, &e.Analyst, &e.Fingerprint, &e.Kind, &e.Mechanism, &e.Outcome, &e.SQLState, &e.Reason,
			&e.ChargeKind, &e.Epsilon, &e.Delta); err != nil {
			rows.Close()
			return err
		}
		e.At, _ = time.Parse(time.RFC3339Nano, at)
		entries = append(entries, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, e := range entries {
		if err := w.write(ctx, e); err != nil {
			return err
		}
	}
	_, err = conn.ExecContext(ctx, `DROP TABLE audit`)
	return err
}

// auditColumns is what a read of the log selects, in scanRelease's order.
const auditColumns = `l.id, l.at, c.analyst, c.kind, c.mechanism, c.outcome, c.sqlstate, c.reason, c.charge_kind, c.epsilon, c.delta, c.rho,
	l.fingerprint, l.fp_text, coalesce(s.shape, ''), l.constants, l.cells
FROM audit_log l JOIN audit_context c ON c.id = l.context LEFT JOIN audit_shape s ON s.id = l.shape`

func scanEntry(rows *sql.Rows, resolve textOf) (AuditEntry, error) {
	var e AuditEntry
	var at int64
	var fp sql.NullInt64
	var fpText sql.NullString
	var constants, cells []byte
	if err := rows.Scan(&e.ID, &at, &e.Analyst, &e.Kind, &e.Mechanism, &e.Outcome, &e.SQLState, &e.Reason,
		&e.ChargeKind, &e.Epsilon, &e.Delta, &e.Rho, &fp, &fpText, &e.Shape, &constants, &cells); err != nil {
		return e, err
	}
	e.At = time.UnixMicro(at).UTC()
	e.Fingerprint = unpackFingerprint(fp, fpText)
	var err error
	if e.Constants, err = decodeConstants(constants, resolve); err != nil {
		return e, err
	}
	e.Cells, err = decodeCells(cells)
	return e, err
}

// auditWhere is the SQL condition and arguments a filter selects by.
func auditWhere(f AuditFilter) (string, []any) {
	where, args := []string{"1 = 1"}, []any{}
	if f.Analyst != "" {
		where, args = append(where, "l.context IN (SELECT id FROM audit_context WHERE analyst = ?)"), append(args, f.Analyst)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "l.at >= ?"), append(args, f.Since.UnixMicro())
	}
	if !f.Before.IsZero() {
		where, args = append(where, "l.at < ?"), append(args, f.Before.UnixMicro())
	}
	if f.AfterID > 0 {
		where, args = append(where, "l.id > ?"), append(args, f.AfterID)
	}
	if f.AnsweredOnly {
		where = append(where, "l.context IN (SELECT id FROM audit_context WHERE outcome = 'answered')")
	}
	return strings.Join(where, " AND "), args
}

// textResolver reads interned strings by id for one listing, each once.
func (s *DB) textResolver(ctx context.Context) textOf {
	known := map[int64]string{}
	return func(id int64) (string, error) {
		if t, ok := known[id]; ok {
			return t, nil
		}
		var t string
		if err := s.sql.QueryRowContext(ctx, `SELECT text FROM audit_text WHERE id = ?`, id).Scan(&t); err != nil {
			return "", fmt.Errorf("reading an interned audit string: %w", err)
		}
		known[id] = t
		return t, nil
	}
}

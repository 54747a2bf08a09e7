package state

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// The audit log is three tables. audit_log has one row per statement: its
// time (microseconds since 1970), its context and either its keyed
// fingerprint (a statement whose text is not kept: refusals, SET, SHOW) or,
// for an answered query, its shape, its constants and its released cells.
// audit_context interns what repeats from row to row (analyst, kind,
// mechanism, outcome, SQLSTATE, reason, charge), audit_shape the statement
// shapes, audit_text the longer string constants and the templates of the
// answered queries' structured records (auditquery.go); each is written
// once and referenced by id. Both are keyed by a
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
	cells       BLOB,
	query       BLOB
);`

const (
	insertAuditRow     = `INSERT INTO audit_log (at, context, fingerprint, fp_text, shape, constants, cells, query) VALUES ` + auditRowValues
	insertAuditContext = `INSERT OR IGNORE INTO audit_context (hash, analyst, kind, mechanism, outcome, sqlstate, reason, charge_kind, epsilon, delta, rho) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	selectAuditContext = `SELECT id FROM audit_context WHERE hash = ?`
	insertAuditShape   = `INSERT OR IGNORE INTO audit_shape (hash, shape) VALUES (?, ?)`
	selectAuditShape   = `SELECT id FROM audit_shape WHERE hash = ?`
	insertAuditText    = `INSERT OR IGNORE INTO audit_text (hash, text) VALUES (?, ?)`
	selectAuditText    = `SELECT id FROM audit_text WHERE hash = ?`
)

// auditRowValues is one row's placeholders in insertAuditRow, and
// auditRowArgs their count.
const (
	auditRowValues = "(?, ?, ?, ?, ?, ?, ?, ?)"
	auditRowArgs   = 8
)

// auditRowsPerInsert is the rows insertAuditRows writes at once: a commit
// of a busy server's statements holds a few dozen.
const auditRowsPerInsert = 16

// insertAuditRows is insertAuditRow of auditRowsPerInsert rows.
var insertAuditRows = insertAuditRow + strings.Repeat(", "+auditRowValues, auditRowsPerInsert-1)

// rowFingerprint is what a row stores of e's fingerprint. The fingerprint
// stands in for a statement whose text is not kept (a refusal, SET, SHOW);
// a row that records the statement itself (its shape and constants) needs
// none, and storing NULL saves its 8 bytes on every answered statement.
func rowFingerprint(e AuditEntry) (num, text any) {
	if e.Shape != "" {
		return nil, nil
	}
	return packFingerprint(e.Fingerprint)
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
	// audit_log kept no structured record of a query before the risk
	// solvers read one; those rows read back without it.
	if err := addQueryColumn(ctx, s.sql); err != nil {
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
		row: connExecer{conn, insertAuditRow}, rows: connExecer{conn, insertAuditRows}, ctxInsert: connExecer{conn, insertAuditContext}, ctxSelect: connExecer{conn, selectAuditContext},
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

// addQueryColumn adds audit_log's query column to a log from before it.
func addQueryColumn(ctx context.Context, db *sql.DB) error {
	has, err := columnExists(ctx, db, "audit_log", "query")
	if err != nil {
		return fmt.Errorf("reading the columns of audit_log: %w", err)
	}
	if has {
		return nil
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE audit_log ADD COLUMN query BLOB`); err != nil {
		return fmt.Errorf("adding the query column to audit_log: %w", err)
	}
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
	if err := w.writeAll(ctx, entries); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, `DROP TABLE audit`)
	return err
}

// auditColumns is what a read of the log selects, in scanRelease's order.
const auditColumns = `l.id, l.at, c.analyst, c.kind, c.mechanism, c.outcome, c.sqlstate, c.reason, c.charge_kind, c.epsilon, c.delta, c.rho,
	l.fingerprint, l.fp_text, coalesce(s.shape, ''), l.constants, l.cells, l.query
FROM audit_log l JOIN audit_context c ON c.id = l.context LEFT JOIN audit_shape s ON s.id = l.shape`

func scanEntry(rows *sql.Rows, queries *queryReader) (AuditEntry, error) {
	var e AuditEntry
	var at int64
	var fp sql.NullInt64
	var fpText sql.NullString
	var constants, cells, query []byte
	if err := rows.Scan(&e.ID, &at, &e.Analyst, &e.Kind, &e.Mechanism, &e.Outcome, &e.SQLState, &e.Reason,
		&e.ChargeKind, &e.Epsilon, &e.Delta, &e.Rho, &fp, &fpText, &e.Shape, &constants, &cells, &query); err != nil {
		return e, err
	}
	e.At = time.UnixMicro(at).UTC()
	e.Fingerprint = unpackFingerprint(fp, fpText)
	var err error
	if e.Constants, err = decodeConstants(constants, queries.resolve); err != nil {
		return e, err
	}
	if e.Query, err = queries.decode(query, e.Constants); err != nil {
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

// Package statedb is the firewall's own state database: the noise secret and
// the audit log (the budget ledger keeps its tables in the same file). It is a
// separate SQLite file from the protected database, which is never written.
package statedb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// SecretBytes is the length of the firewall secret.
const SecretBytes = 32

// DB is an open state database.
type DB struct {
	sql    *sql.DB
	secret []byte

	// The audit log is written by one goroutine in batches, so that a query
	// does not wait for an fsync of its audit line (the ledger, not the audit
	// log, is what must be durable before an answer leaves).
	auditQueue chan AuditEntry
	auditDone  chan struct{}
	closeOnce  sync.Once
}

// auditBatch bounds how many entries one audit transaction writes.
const auditBatch = 256

// Open opens (creating if needed) the state database at path. The file is
// created readable by its owner only; on first start a fresh secret is drawn
// from crypto/rand and stored, so record keys stay stable across restarts.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("state database path is empty")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening state database: %w", err)
	}
	f.Close()
	// The file may predate us with looser permissions; the secret must not be
	// readable by others.
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("restricting state database permissions: %w", err)
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening state database: %w", err)
	}
	s := &DB{sql: db, auditQueue: make(chan AuditEntry, 4096), auditDone: make(chan struct{})}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.loadSecret(ctx); err != nil {
		db.Close()
		return nil, err
	}
	go s.auditWriter()
	return s, nil
}

// SQL is the underlying handle, for the ledger's own tables.
func (s *DB) SQL() *sql.DB { return s.sql }

// Secret is the firewall secret that keys record keys and sticky noise.
// Callers must not log it or hand it to analysts.
func (s *DB) Secret() []byte { return s.secret }

// Close flushes the audit log and closes the database.
func (s *DB) Close() error {
	s.closeOnce.Do(func() {
		close(s.auditQueue)
		<-s.auditDone
	})
	return s.sql.Close()
}

func (s *DB) migrate(ctx context.Context) error {
	const schema = `
CREATE TABLE IF NOT EXISTS secret (
	id     INTEGER PRIMARY KEY CHECK (id = 1),
	value  BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS audit (
	id          INTEGER PRIMARY KEY,
	at          TEXT NOT NULL,
	analyst     TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	kind        TEXT NOT NULL,
	mechanism   TEXT NOT NULL,
	outcome     TEXT NOT NULL,
	sqlstate    TEXT NOT NULL,
	reason      TEXT NOT NULL
);`
	if _, err := s.sql.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("creating state tables: %w", err)
	}
	return nil
}

func (s *DB) loadSecret(ctx context.Context) error {
	fresh := make([]byte, SecretBytes)
	if _, err := rand.Read(fresh); err != nil {
		return fmt.Errorf("drawing firewall secret: %w", err)
	}
	// INSERT OR IGNORE keeps the first secret when two processes start at once.
	if _, err := s.sql.ExecContext(ctx, `INSERT OR IGNORE INTO secret (id, value) VALUES (1, ?)`, fresh); err != nil {
		return fmt.Errorf("storing firewall secret: %w", err)
	}
	if err := s.sql.QueryRowContext(ctx, `SELECT value FROM secret WHERE id = 1`).Scan(&s.secret); err != nil {
		return fmt.Errorf("reading firewall secret: %w", err)
	}
	if len(s.secret) != SecretBytes {
		return fmt.Errorf("firewall secret in state database has %d bytes, want %d", len(s.secret), SecretBytes)
	}
	return nil
}

// AuditEntry is one statement's outcome. It holds no data values: the SQL
// text is kept only as a fingerprint, and reasons are the refusal messages,
// which never contain values read from the database.
type AuditEntry struct {
	At          time.Time
	Analyst     string
	Fingerprint string
	Kind        string // query, set, show, chatter, invalid
	Mechanism   string
	Outcome     string // answered, refused
	SQLState    string // "" when answered
	Reason      string

	flush chan struct{} // a Flush marker, not an entry
}

// Audit queues an entry for the audit log. It blocks only when the writer is
// far behind, so entries are never dropped.
func (s *DB) Audit(e AuditEntry) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	s.auditQueue <- e
}

// Flush waits until every entry queued so far is written.
func (s *DB) Flush() {
	done := make(chan struct{})
	s.auditQueue <- AuditEntry{flush: done}
	<-done
}

func (s *DB) auditWriter() {
	defer close(s.auditDone)
	for first := range s.auditQueue {
		batch := []AuditEntry{first}
	fill:
		for len(batch) < auditBatch {
			select {
			case e, ok := <-s.auditQueue:
				if !ok {
					break fill
				}
				batch = append(batch, e)
			default:
				break fill
			}
		}
		if err := s.writeAudit(batch); err != nil {
			fmt.Fprintln(os.Stderr, "countwall: audit log write failed:", err)
		}
		for _, e := range batch {
			if e.flush != nil {
				close(e.flush)
			}
		}
	}
}

func (s *DB) writeAudit(batch []AuditEntry) error {
	ctx := context.Background()
	tx, err := s.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO audit (at, analyst, fingerprint, kind, mechanism, outcome, sqlstate, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, e := range batch {
		if e.flush != nil {
			continue
		}
		if _, err := stmt.ExecContext(ctx, e.At.UTC().Format(time.RFC3339Nano), e.Analyst, e.Fingerprint, e.Kind, e.Mechanism, e.Outcome, e.SQLState, e.Reason); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// AuditLog returns the most recent entries, newest last.
func (s *DB) AuditLog(ctx context.Context, limit int) ([]AuditEntry, error) {
	rows, err := s.sql.QueryContext(ctx,
		`SELECT at, analyst, fingerprint, kind, mechanism, outcome, sqlstate, reason FROM (SELECT * FROM audit ORDER BY id DESC LIMIT ?) ORDER BY id`, limit)
	if err != nil {
		return nil, fmt.Errorf("reading audit log: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var at string
		if err := rows.Scan(&at, &e.Analyst, &e.Fingerprint, &e.Kind, &e.Mechanism, &e.Outcome, &e.SQLState, &e.Reason); err != nil {
			return nil, fmt.Errorf("reading audit log: %w", err)
		}
		e.At, _ = time.Parse(time.RFC3339Nano, at)
		out = append(out, e)
	}
	return out, rows.Err()
}

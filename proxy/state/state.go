// The state database holds the noise secret, the audit log and the budget
// ledger's tables.

package state

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// SecretBytes is the length of the firewall secret.
const SecretBytes = 32

// DB is an open state database.
type DB struct {
	sql    *sql.DB
	secret []byte
	ledger *Ledger
	// fingerprints are HMACs keyed with secret, reset for each statement
	// rather than keyed afresh.
	fingerprints sync.Pool

	// audit is the audit writer's own handle, synchronous as
	// Options.AuditSync says. The ledger's transactions (and the audit rows
	// written inside them) use sql, which is always synchronous=FULL. On
	// SQLite the writer holds audit's one connection (auditConn); on
	// PostgreSQL audit is sql, and its statements are auditPrepared.
	audit         *sql.DB
	auditConn     *auditConn
	auditPrepared preparedAudit
	auditSync     AuditSync
	postgres      bool
	// contexts, shapes and texts are the ids of interned audit contexts,
	// statement shapes and strings already written (auditwrite.go).
	contexts      interned[contextKey]
	shapes, texts interned[string]

	// The audit log is written with group commit: whoever holds the
	// writing turn writes every entry pending at that moment in one
	// transaction, so concurrent answers share one commit. An answer's
	// goroutine takes the turn itself when no one else has it
	// (AuditDurable), so one session's answers cost no hand-off to another
	// goroutine; a refusal only joins the pending entries and wakes the
	// background flusher (Audit).
	pendingMu sync.Mutex
	pending   []AuditEntry
	written   []AuditEntry // the last batch's slice, emptied, for the next (the writing turn's)
	closed    bool
	writing   chan struct{} // the writing turn: capacity 1, held by sending
	kick      chan struct{} // wakes the flusher; capacity 1
	flusherOK chan struct{} // closed when the flusher has stopped
}

// ErrClosed is returned for an audit entry offered after Close.
var ErrClosed = errors.New("state database is closed")

// maxPending is how many entries may wait for a commit before a refusal
// writes them itself rather than leave them to the flusher: a flood of
// refusals slows its sender instead of growing memory.
const maxPending = 4096

// AuditSync is how far an answer's audit row has gone when the answer
// leaves.
type AuditSync string

const (
	// AuditSyncFull commits the row to disk (fsync, or PostgreSQL's
	// synchronous commit) before the answer leaves: it survives a power
	// loss. The default.
	AuditSyncFull AuditSync = "full"
	// AuditSyncNormal writes the row to the state database's write-ahead
	// log before the answer leaves but does not wait for the disk: SQLite's
	// synchronous=NORMAL in WAL mode (the log is fsynced at checkpoints and
	// by every budget charge), PostgreSQL's synchronous_commit=off for the
	// audit transaction. The row survives a crash or kill of countwall; a
	// power loss or operating-system crash (for PostgreSQL, a crash of its
	// server) may lose the last rows. Budget charges stay fully durable.
	AuditSyncNormal AuditSync = "normal"
)

// ParseAuditSync reads the audit.sync setting; "" is AuditSyncFull.
func ParseAuditSync(s string) (AuditSync, error) {
	switch AuditSync(strings.ToLower(s)) {
	case "", AuditSyncFull:
		return AuditSyncFull, nil
	case AuditSyncNormal:
		return AuditSyncNormal, nil
	}
	return "", fmt.Errorf("audit sync must be %q or %q, got %q", AuditSyncFull, AuditSyncNormal, s)
}

// Options tune a state database.
type Options struct {
	// AuditSync is how durable an answer's audit row is before the answer
	// leaves; the zero value is AuditSyncFull.
	AuditSync AuditSync
	// Reserve is the ledger's LedgerOptions.Reserve.
	Reserve int
}

// Open opens (creating if needed) the state database at path. The file is
// created readable by its owner only; on first start a fresh secret is drawn
// from crypto/rand and stored, so record keys stay stable across restarts.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if path == "" {
		return nil, errors.New("state database path is empty")
	}
	auditSync, err := ParseAuditSync(string(opts.AuditSync))
	if err != nil {
		return nil, err
	}
	if IsPostgresURL(path) {
		// A PostgreSQL state is shared by every instance that names it;
		// commits are durable with the server's default synchronous_commit.
		db, err := openPostgres(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("opening state database: %w", err)
		}
		return start(ctx, db, db, auditSync, opts.Reserve)
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
	db, err := sql.Open("sqlite", sqliteDSN(path, AuditSyncFull))
	if err != nil {
		return nil, fmt.Errorf("opening state database: %w", err)
	}
	audit, err := sql.Open("sqlite", sqliteDSN(path, auditSync))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening state database: %w", err)
	}
	// One writer connection: the audit's transactions are serial anyway,
	// and its prepared insert is then compiled once.
	audit.SetMaxOpenConns(1)
	return start(ctx, db, audit, auditSync, opts.Reserve)
}

// sqliteDSN opens a state file in WAL mode with the given synchronous
// setting; transactions take the write lock at BEGIN, so that two writers
// wait for each other rather than fail.
func sqliteDSN(path string, synchronous AuditSync) string {
	return "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(" + strings.ToUpper(string(synchronous)) +
		")&_pragma=busy_timeout(10000)&_txlock=immediate"
}

// start creates the tables if needed, reads the secret and starts the audit
// writer on its own handle (audit may be db itself).
func start(ctx context.Context, db, audit *sql.DB, auditSync AuditSync, reserve int) (*DB, error) {
	s := &DB{sql: db, audit: audit, auditSync: auditSync, postgres: isPostgres(db),
		writing: make(chan struct{}, 1), kick: make(chan struct{}, 1), flusherOK: make(chan struct{})}
	fail := func(err error) (*DB, error) {
		if audit != db {
			audit.Close()
		}
		db.Close()
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		return fail(err)
	}
	if err := s.loadSecret(ctx); err != nil {
		return fail(err)
	}
	book, err := OpenLedger(ctx, db, LedgerOptions{Reserve: reserve})
	if err != nil {
		return fail(err)
	}
	s.ledger = book
	if s.postgres {
		s.auditPrepared, err = prepareAudit(ctx, audit, auditQueries)
	} else {
		s.auditConn, err = openAuditConn(ctx, audit)
	}
	if err != nil {
		return fail(err)
	}
	go s.flusher()
	return s, nil
}

// Exists reports, for a command that only reads the state, whether the
// state database at path is there: a SQLite file must exist (opening would
// create an empty one), a PostgreSQL URL is taken as given.
func Exists(path string) error {
	if IsPostgresURL(path) {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no state database at %s: %w", path, err)
	}
	return nil
}

// SQL is the underlying handle, for tests and offline reads.
func (s *DB) SQL() *sql.DB { return s.sql }

// Ledger is the budget ledger kept in this state database.
func (s *DB) Ledger() *Ledger { return s.ledger }

// Secret is the firewall secret that keys record keys and sticky noise.
// Callers must not log it or hand it to analysts.
func (s *DB) Secret() []byte { return s.secret }

// Fingerprint identifies a statement's text in the audit log, the logs and
// the ledger without keeping it: an HMAC keyed with the firewall secret, so
// that holding the log is not enough to confirm a guessed statement.
func (s *DB) Fingerprint(sql string) string {
	h, _ := s.fingerprints.Get().(hash.Hash)
	if h == nil {
		h = hmac.New(sha256.New, s.secret)
	}
	defer s.fingerprints.Put(h)
	return fingerprintWith(h, sql)
}

// Fingerprint is DB.Fingerprint for a given secret: the first 8 bytes of
// HMAC-SHA256(secret, sql), in hex.
func Fingerprint(secret []byte, sql string) string {
	return fingerprintWith(hmac.New(sha256.New, secret), sql)
}

// fingerprintWith is Fingerprint with mac, an HMAC-SHA256 keyed with the
// secret, which it resets first.
func fingerprintWith(mac hash.Hash, sql string) string {
	mac.Reset()
	mac.Write([]byte("countwall statement fingerprint\x00"))
	io.WriteString(mac, sql) //nolint:errcheck // a hash's Write never fails
	var sum [sha256.Size]byte
	return hex.EncodeToString(mac.Sum(sum[:0])[:8])
}

// Close settles the ledger's open reservations, flushes the audit log and
// closes the database.
func (s *DB) Close() error {
	s.pendingMu.Lock()
	already := s.closed
	if !already {
		s.closed = true
		close(s.kick)
	}
	s.pendingMu.Unlock()
	if already {
		return nil
	}
	<-s.flusherOK
	s.commitPending() // what arrived after the flusher's last batch
	err := s.ledger.Close(context.Background())
	err = errors.Join(err, s.auditPrepared.close())
	if s.auditConn != nil {
		err = errors.Join(err, s.auditConn.close())
	}
	if s.audit != s.sql {
		err = errors.Join(err, s.audit.Close())
	}
	return errors.Join(err, s.sql.Close())
}

func (s *DB) migrate(ctx context.Context) error {
	const schema = `
CREATE TABLE IF NOT EXISTS secret (
	id     INTEGER PRIMARY KEY CHECK (id = 1),
	value  BLOB NOT NULL
);`
	if _, err := s.sql.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("creating state tables: %w", err)
	}
	return s.migrateAudit(ctx)
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

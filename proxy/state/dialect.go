// The PostgreSQL dialect lets the state database (the secret, the audit
// log, the budget ledger) live in PostgreSQL as well as in SQLite, so that
// several firewall instances share one ledger.
//
// The state's SQL is written once, in SQLite's dialect. openPostgres returns a pool
// whose driver is pgx with a translation in front: every statement is
// rewritten by translate, the few constructs whose spelling differs, before
// PostgreSQL sees it. What cannot be spelt in one statement for both (does a
// table or a column exist, is a commit durable) is asked through the helpers
// here, which answer for either backend.
//
// The ledger serialises charges with SQLite's BEGIN IMMEDIATE, a write lock
// on the whole database taken before anything is read. On PostgreSQL the
// same statement takes a transaction-scoped advisory lock, held by one
// transaction of one instance at a time until it commits or rolls back (or
// its connection dies with its process), so two instances checking one
// analyst's cap are serialised exactly as two SQLite processes are.

package state

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/stdlib"
)

// driverName is the translating driver's name in database/sql.
const driverName = "countwall-postgres-state"

// ledgerLockKey is the advisory lock BEGIN IMMEDIATE takes on PostgreSQL
// (an arbitrary constant: the bytes of "cwledger").
const ledgerLockKey = 0x63776c6564676572

// schemaLockKey is the advisory lock under which schema changes run ("cwschema").
const schemaLockKey = 0x6377736368656d61

// isDDL reports whether a statement creates or alters a table or an index.
func isDDL(query string) bool {
	q := strings.ToUpper(strings.TrimSpace(query))
	return strings.HasPrefix(q, "CREATE") || strings.HasPrefix(q, "ALTER")
}

func init() { sql.Register(driverName, &translating{}) }

// IsURL reports whether a state setting names a PostgreSQL server.
func IsPostgresURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// Open opens the PostgreSQL state database at url through the translating
// driver and checks that it answers.
func openPostgres(ctx context.Context, url string) (*sql.DB, error) {
	db, err := sql.Open(driverName, url)
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// IsPostgres reports whether db was opened by Open.
func isPostgres(db *sql.DB) bool {
	_, ok := db.Driver().(*translating)
	return ok
}

// TableExists reports whether the state database has a table of that name.
func tableExists(ctx context.Context, db *sql.DB, table string) (bool, error) {
	var n int
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
	if isPostgres(db) {
		q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?`
	}
	if err := db.QueryRowContext(ctx, q, table).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// ColumnExists reports whether a table of the state database has a column.
func columnExists(ctx context.Context, db *sql.DB, table, column string) (bool, error) {
	return columnExistsOn(ctx, db, isPostgres(db), table, column)
}

// columnExistsOn is columnExists through q (a transaction's connection, for
// one), pg saying whether the state is PostgreSQL.
func columnExistsOn(ctx context.Context, q querier, pg bool, table, column string) (bool, error) {
	var n int
	query := `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`
	if pg {
		query = `SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?`
	}
	if err := q.QueryRowContext(ctx, query, table, column).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// CheckDurable refuses a state database whose commits would not survive a
// crash: SQLite must run in WAL mode with synchronous=FULL; PostgreSQL must
// not have synchronous_commit off (a commit must be flushed before it is
// acknowledged).
func checkDurable(ctx context.Context, db *sql.DB) error {
	if isPostgres(db) {
		var sc string
		if err := db.QueryRowContext(ctx, "SHOW synchronous_commit").Scan(&sc); err != nil {
			return fmt.Errorf("reading synchronous_commit: %w", err)
		}
		if sc == "off" {
			return fmt.Errorf("the PostgreSQL state database must not run with synchronous_commit=off")
		}
		return nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var mode string
	var sync int
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("reading journal mode: %w", err)
	}
	if err := conn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
		return fmt.Errorf("reading synchronous: %w", err)
	}
	if !strings.EqualFold(mode, "wal") || sync < 2 {
		return fmt.Errorf("state database must use journal_mode=WAL and synchronous=FULL (got %s and %d)", mode, sync)
	}
	return nil
}

var (
	ddlTypes = strings.NewReplacer(
		"INTEGER PRIMARY KEY", "BIGSERIAL PRIMARY KEY",
		" REAL", " DOUBLE PRECISION",
		" BLOB", " BYTEA",
	)
	addColumn = regexp.MustCompile(`(?i)\bADD COLUMN\b`)
	orIgnore  = regexp.MustCompile(`(?i)^\s*INSERT OR IGNORE INTO\b`)
)

// Translate rewrites one statement of the state's SQLite dialect for
// PostgreSQL:
//   - ? and ?N parameters become $N;
//   - in CREATE and ALTER TABLE, INTEGER PRIMARY KEY becomes BIGSERIAL
//     PRIMARY KEY, REAL double precision, BLOB bytea, and ADD COLUMN gains
//     IF NOT EXISTS;
//   - the two-argument scalar max() and min() become greatest() and least()
//     (one-argument max and min are aggregates in both);
//   - INSERT OR IGNORE becomes INSERT ... ON CONFLICT DO NOTHING.
//
// Quoted strings and identifiers are left as they are.
func translate(query string) string {
	q := query
	if isDDL(q) {
		q = ddlTypes.Replace(q)
		q = addColumn.ReplaceAllString(q, "ADD COLUMN IF NOT EXISTS")
	}
	if orIgnore.MatchString(q) {
		q = orIgnore.ReplaceAllString(q, "INSERT INTO") + " ON CONFLICT DO NOTHING"
	}
	q = scalarMinMax(q)
	return rebind(q)
}

// rebind turns ? and ?N into $N outside quotes.
func rebind(q string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch c {
		case '\'', '"':
			j := i + 1
			for j < len(q) && q[j] != c {
				j++
			}
			b.WriteString(q[i:min(j+1, len(q))])
			i = j
		case '?':
			if j := i + 1; j < len(q) && q[j] >= '0' && q[j] <= '9' {
				for j < len(q) && q[j] >= '0' && q[j] <= '9' {
					j++
				}
				b.WriteString("$" + q[i+1:j])
				i = j - 1
				continue
			}
			n++
			b.WriteString("$" + strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// scalarMinMax renames max( and min( calls with two or more arguments.
func scalarMinMax(q string) string {
	lower := strings.ToLower(q)
	var b strings.Builder
	last := 0
	for i := 0; i+4 <= len(q); i++ {
		name := lower[i : i+3]
		if (name != "max" && name != "min") || lower[i+3] != '(' || (i > 0 && isIdent(lower[i-1])) {
			continue
		}
		depth, commas := 0, 0
	scan:
		for j := i + 3; j < len(q); j++ {
			switch q[j] {
			case '(':
				depth++
			case ')':
				depth--
			case ',':
				if depth == 1 {
					commas++
				}
			}
			if depth == 0 {
				break scan
			}
		}
		if commas == 0 {
			continue
		}
		b.WriteString(q[last:i])
		if name == "max" {
			b.WriteString("greatest")
		} else {
			b.WriteString("least")
		}
		last = i + 3
	}
	b.WriteString(q[last:])
	return b.String()
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}

// translating is pgx's database/sql driver with Translate in front.
type translating struct{}

func (d *translating) Open(name string) (driver.Conn, error) {
	c, err := d.OpenConnector(name)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

func (d *translating) OpenConnector(name string) (driver.Connector, error) {
	inner, err := stdlib.GetDefaultDriver().(driver.DriverContext).OpenConnector(name)
	if err != nil {
		return nil, err
	}
	return &connector{inner: inner, d: d}, nil
}

type connector struct {
	inner driver.Connector
	d     *translating
}

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("dialect: pgx returned a %T connection", conn)
	}
	return &conn_{Conn: sc}, nil
}

func (c *connector) Driver() driver.Driver { return c.d }

// conn_ is a pgx connection whose statements are translated.
type conn_ struct {
	*stdlib.Conn
}

func (c *conn_) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(translate(query))
}

func (c *conn_) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, translate(query))
}

func (c *conn_) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, translate(query), args)
}

func (c *conn_) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if strings.EqualFold(strings.TrimSpace(query), "BEGIN IMMEDIATE") {
		if _, err := c.Conn.ExecContext(ctx, "BEGIN", nil); err != nil {
			return nil, err
		}
		if _, err := c.Conn.ExecContext(ctx, "SELECT pg_advisory_xact_lock("+strconv.FormatInt(ledgerLockKey, 10)+")", nil); err != nil {
			c.Conn.ExecContext(context.Background(), "ROLLBACK", nil) //nolint:errcheck // the lock's error is the one to report
			return nil, err
		}
		return driver.RowsAffected(0), nil
	}
	translated := translate(query)
	if isDDL(query) && len(args) == 0 && c.Conn.Conn().PgConn().TxStatus() == 'I' {
		// CREATE TABLE IF NOT EXISTS is not safe against itself in
		// PostgreSQL: instances starting together would collide in the
		// catalog. One schema change at a time, under a lock of its own.
		translated = "BEGIN; SELECT pg_advisory_xact_lock(" + strconv.FormatInt(schemaLockKey, 10) + "); " + translated + "; COMMIT"
	}
	res, err := c.Conn.ExecContext(ctx, translated, args)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(query)), "INSERT") {
		return &insertResult{Result: res, c: c}, nil
	}
	return res, nil
}

// insertResult answers LastInsertId as SQLite does for a table whose key is
// a BIGSERIAL: the session's last sequence value, read when asked.
type insertResult struct {
	driver.Result
	c *conn_
}

func (r *insertResult) LastInsertId() (int64, error) {
	rows, err := r.c.Conn.QueryContext(context.Background(), "SELECT lastval()", nil)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err != nil {
		return 0, err
	}
	id, ok := dest[0].(int64)
	if !ok {
		return 0, fmt.Errorf("dialect: lastval() returned %T", dest[0])
	}
	return id, nil
}

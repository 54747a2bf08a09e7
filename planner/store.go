package planner

import (
	"context"
	"countwall/ir"
	"countwall/pgerror"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// StoreOptions tune the read-only store. Zero fields take the defaults below.
type StoreOptions struct {
	QueryTimeout time.Duration // deadline of one Run (default 10s)
	BusyTimeout  time.Duration // how long SQLite waits on a lock held by a writer elsewhere (default 5s)
	MaxOpenConns int           // pooled connections (default 2*GOMAXPROCS)
	// NoSnapshot turns the in-memory fast path off: every query runs in SQLite.
	NoSnapshot bool
	// SnapshotMaxBytes bounds the memory of one table's snapshot (default
	// 1 GiB); a table that needs more is answered by SQLite alone.
	SnapshotMaxBytes int64
	// OnSnapshot, when set, is told when a table's snapshot is being read,
	// has been read, or cannot be held.
	OnSnapshot func(SnapshotInfo)
}

const (
	defaultQueryTimeout = 10 * time.Second
	defaultBusyTimeout  = 5 * time.Second
)

func (o StoreOptions) withDefaults() StoreOptions {
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = defaultQueryTimeout
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = defaultBusyTimeout
	}
	if o.MaxOpenConns <= 0 {
		o.MaxOpenConns = 2 * runtime.GOMAXPROCS(0)
	}
	return o
}

// Store is the protected database, opened read-only. It is safe for
// concurrent use: database/sql pools its connections.
type Store struct {
	db    *sql.DB
	opts  StoreOptions
	snaps *snapshots // nil when NoSnapshot
	pg    *pgState   // set when the store is a PostgreSQL database
}

// OpenStore opens the protected database read-only: a postgres:// URL is a
// PostgreSQL store (see openPostgresStore); anything else is the path of a
// SQLite file. The file must exist:
// SQLite's mode=ro never creates one, and a typo in a path should say so
// rather than show an empty database. Every connection is also query_only, so
// a write is refused twice over, and LIKE is case-sensitive as in PostgreSQL.
func OpenStore(path string, opts StoreOptions) (*Store, error) {
	opts = opts.withDefaults()
	if IsPostgresURL(path) {
		return openPostgresStore(path, opts)
	}
	if err := ensureRecordKeyFunc(); err != nil {
		return nil, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("planner: opening the protected database %q: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("planner: opening the protected database %q: not a regular file", path)
	}
	db, err := sql.Open("sqlite", storeDSN(path, opts))
	if err != nil {
		return nil, fmt.Errorf("planner: opening the protected database %q: %w", path, err)
	}
	db.SetMaxOpenConns(opts.MaxOpenConns)
	db.SetMaxIdleConns(opts.MaxOpenConns)
	// Reading the schema proves the file is a SQLite database now rather than
	// at the first analyst query.
	// Opening is not an analyst's query: a short statement deadline (tests
	// use milliseconds) must not fail it on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), max(opts.QueryTimeout, defaultQueryTimeout))
	defer cancel()
	var tables int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_schema").Scan(&tables); err != nil {
		db.Close()
		return nil, fmt.Errorf("planner: opening the protected database %q: %w", path, err)
	}
	st := &Store{db: db, opts: opts}
	if !opts.NoSnapshot {
		if st.snaps, err = openSnapshots(path, storeDSN(path, opts), opts); err != nil {
			db.Close()
			return nil, fmt.Errorf("planner: opening the protected database %q: %w", path, err)
		}
	}
	return st, nil
}

// storeDSN is the read-only URI of the database file. The path is
// percent-escaped so that a '?' or '#' in a file name stays part of it.
func storeDSN(path string, opts StoreOptions) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	q := url.Values{}
	q.Set("mode", "ro")
	q["_pragma"] = []string{
		"query_only(1)",
		fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()),
		"case_sensitive_like(1)",
	}
	return u.String() + "?" + q.Encode()
}

// Close closes the pool and drops the snapshots.
func (s *Store) Close() error {
	var err error
	if s.snaps != nil {
		err = s.snaps.close()
	}
	return errors.Join(err, s.db.Close())
}

// ColumnInfo is one column of a stored table as SQLite declares it.
type ColumnInfo struct {
	Name string
	Type ir.ColumnType
}

// Columns lists a table's columns in declaration order.
func (s *Store) Columns(ctx context.Context, table string) ([]ColumnInfo, error) {
	if s.pg != nil {
		return s.pgColumns(ctx, table)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, fmt.Errorf("planner: reading the columns of table %q: %w", table, err)
	}
	defer rows.Close()
	var cols []ColumnInfo
	for rows.Next() {
		var name, decl string
		if err := rows.Scan(&name, &decl); err != nil {
			return nil, fmt.Errorf("planner: reading the columns of table %q: %w", table, err)
		}
		cols = append(cols, ColumnInfo{Name: name, Type: declaredType(decl)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("planner: reading the columns of table %q: %w", table, err)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("planner: table %q is not in the protected database", table)
	}
	return cols, nil
}

// declaredType maps a declared SQLite column type to a ColumnType following
// SQLite's affinity rules (https://sqlite.org/datatype3.html, 3.1): INT
// anywhere means integer; CHAR, CLOB, TEXT mean text; BLOB or no type is kept
// as text; REAL, FLOA, DOUB and the NUMERIC family (NUMERIC, DECIMAL) are real;
// BOOLEAN holds 0 and 1, so it is integer; anything else (DATE...) is text.
func declaredType(decl string) ir.ColumnType {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "INT"):
		return ir.TypeInt
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"),
		strings.Contains(d, "BLOB"), d == "":
		return ir.TypeText
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"),
		strings.Contains(d, "NUM"), strings.Contains(d, "DEC"):
		return ir.TypeReal
	case strings.Contains(d, "BOOL"):
		return ir.TypeInt
	default:
		return ir.TypeText
	}
}

// querier is what Run reads through: the pool, or a transaction when two
// statements must see one snapshot.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Run computes the cells of a validated query, and exactly the extra figures
// needs asks for, in one pass of SQLite (plus a COUNT(*) of the table when
// needs.TableSize, read in the same snapshot). secret keys the record keys and
// is used only when needs.Key.
//
// Cells: a plain COUNT has exactly one cell (count 0 when nothing matches).
// When every GROUP BY column has a public domain, Cells is the whole domain
// product in domain order, zero cells included and groups outside the domain
// left out, and DomainComplete is true (as it is for a plain COUNT). Otherwise
// Cells are the groups SQLite finds, refused with pgerror.ProgramLimitExceeded beyond
// Policy.MaxGroups, with InDomain false where a value lies outside a column's
// domain. ORDER BY is then a stable sort. A threshold query (q.Threshold) gets
// its counts like any other; the mechanism applies the threshold.
//
// A Run that outlives the store's QueryTimeout, or whose ctx is cancelled,
// fails with pgerror.QueryCanceled. Other SQLite failures are wrapped as plain
// errors; their text names tables and columns, never data values.
func (s *Store) Run(ctx context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (*ir.Result, error) {
	if t == nil || q == nil {
		return nil, pgerror.Errorf(pgerror.InternalError, "planner: Run needs a table and a query")
	}
	if needs.Key && len(secret) == 0 {
		return nil, pgerror.Errorf(pgerror.InternalError, "planner: contributor keys need a secret, and none was given")
	}
	if !strings.EqualFold(q.Table, t.Name) {
		return nil, pgerror.Errorf(pgerror.InternalError, "planner: query on table %q run against table %q", q.Table, t.Name)
	}
	shape, err := newCellShape(t, q)
	if err != nil {
		return nil, err
	}
	if needs.GroupLimit > 0 {
		shape.maxGroups = needs.GroupLimit
	}
	if s.pg != nil {
		return s.runPostgres(ctx, t, q, needs, secret, shape)
	}
	var text string
	var args []any
	var bounds ir.Bounds
	if needs.Bound {
		var rank bool
		bounds, rank = effectiveBounds(t, q, needs, shape)
		if rank && len(secret) == 0 {
			return nil, pgerror.Errorf(pgerror.InternalError, "planner: choosing a unit's cells needs a secret, and none was given")
		}
		text, args, err = compileBounded(t, q, needs, bounds, rank, secret)
	} else {
		text, args, err = compile(t, q, needs, secret)
	}
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()

	if s.snaps != nil {
		snap, err := s.snaps.current(ctx, t.Name)
		if err != nil {
			return nil, s.runError(ctx, t, err)
		}
		// Bounded counts differ from plain ones only where a unit has
		// several rows. The snapshot answers them on tables declared keyed by
		// their unit, and the SQL that bounds them answers every other: the
		// choice follows the config, never the rows.
		if snap != nil && (!needs.Bound || t.UnitKeyed) {
			if res, ok, err := snap.answer(t, q, needs, secret, shape); ok {
				// The snapshot does not stop midway; an answer it finished
				// after a cancel or past the deadline is withheld, as
				// SQLite's would be.
				if ctx.Err() != nil {
					return nil, s.runError(ctx, t, ctx.Err())
				}
				if res != nil {
					res.Bounds, res.Path = bounds, ir.PathSnapshot
				}
				return res, err
			}
		}
	}

	var rd querier = s.db
	if needs.TableSize {
		tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return nil, s.runError(ctx, t, err)
		}
		defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep or lose
		rd = tx
	}

	res := &ir.Result{Bounds: bounds, Path: ir.PathSQLite}
	withUnits := needs.Units || needs.Key
	if res.Cells, res.DomainComplete, err = s.readCells(ctx, rd, text, args, shape, withUnits, needs.Key); err != nil {
		var pe *pgerror.Error
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, s.runError(ctx, t, err)
	}
	if needs.TableSize {
		if err := rd.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+quoteIdent(t.Name)).Scan(&res.TableSize); err != nil {
			return nil, s.runError(ctx, t, err)
		}
	}
	if needs.Conditions {
		res.Conditions = Conditions(q)
	}
	return res, nil
}

// runError turns a failure into what the caller should see: a cancelled or
// timed-out Run is pgerror.QueryCanceled, as PostgreSQL reports it; anything else
// is wrapped with the table's name.
func (s *Store) runError(ctx context.Context, t *ir.Table, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &pgerror.Error{Code: pgerror.QueryCanceled, Message: "canceling statement due to statement timeout",
			Hint: fmt.Sprintf("The firewall stops a query after %s.", s.opts.QueryTimeout)}
	case ctx.Err() != nil:
		return &pgerror.Error{Code: pgerror.QueryCanceled, Message: "canceling statement due to user request"}
	}
	return fmt.Errorf("planner: counting in table %q: %w", t.Name, err)
}

// readCells runs the compiled SQL and assembles the output cells.
func (s *Store) readCells(ctx context.Context, rd querier, text string, args []any, shape *cellShape, withUnits, withKey bool) ([]ir.Cell, bool, error) {
	acc := shape.newAccumulator()
	err := scanCells(ctx, rd, text, args, len(shape.columns), withUnits, withKey, acc.add)
	if err != nil {
		return nil, false, err
	}
	cells := acc.result()
	shape.order(cells)
	return cells, shape.complete, nil
}

// scanCells runs SQL whose rows are cells (ng group columns, the count, then
// the units and the contributor key when asked for) and hands each cell to
// add, stopping at the first error add returns.
func scanCells(ctx context.Context, rd querier, text string, args []any, ng int, withUnits, withKey bool, add func(ir.Cell) error) error {
	rows, err := rd.QueryContext(ctx, text, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	groupVals := make([]any, ng)
	dest := make([]any, 0, ng+3)
	for i := range groupVals {
		dest = append(dest, &groupVals[i])
	}
	var count, units, key int64
	dest = append(dest, &count)
	if withUnits {
		dest = append(dest, &units)
	}
	if withKey {
		dest = append(dest, &key)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		c := ir.Cell{Count: count, Units: units, Key: uint32(key), InDomain: true}
		if ng > 0 {
			c.Group = make([]ir.GroupValue, ng)
			for i, v := range groupVals {
				c.Group[i] = groupValue(v)
			}
		}
		if err := add(c); err != nil {
			return err
		}
	}
	return rows.Err()
}

// groupValue renders one group column value as text: integers in decimal,
// reals with the shortest exact form, text and blobs as their bytes.
func groupValue(v any) ir.GroupValue {
	switch v := v.(type) {
	case nil:
		return ir.GroupValue{Null: true}
	case int64:
		return ir.GroupValue{Text: strconv.FormatInt(v, 10)}
	case float64:
		return ir.GroupValue{Text: strconv.FormatFloat(v, 'g', -1, 64)}
	case string:
		return ir.GroupValue{Text: v}
	case []byte:
		return ir.GroupValue{Text: string(v)}
	case time.Time:
		return ir.GroupValue{Text: v.Format(time.RFC3339Nano)}
	default:
		return ir.GroupValue{Text: fmt.Sprint(v)}
	}
}

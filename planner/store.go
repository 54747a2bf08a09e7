package planner

import (
	"context"
	"countwall/ir"
	"countwall/pgerror"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

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

// Close closes the pool and drops the snapshots.
func (s *Store) Close() error {
	var err error
	if s.snaps != nil {
		err = s.snaps.close()
	}
	return errors.Join(err, s.db.Close())
}

// Columns lists a table's columns in declaration order.
func (s *Store) Columns(ctx context.Context, table string) ([]ir.ColumnInfo, error) {
	if s.pg != nil {
		return s.pgColumns(ctx, table)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, fmt.Errorf("planner: reading the columns of table %q: %w", table, err)
	}
	defer rows.Close()
	var cols []ir.ColumnInfo
	for rows.Next() {
		var name, decl string
		if err := rows.Scan(&name, &decl); err != nil {
			return nil, fmt.Errorf("planner: reading the columns of table %q: %w", table, err)
		}
		cols = append(cols, ir.ColumnInfo{Name: name, Type: declaredType(decl)})
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
			return nil, runError(ctx, s.opts.QueryTimeout, t, err)
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
					return nil, runError(ctx, s.opts.QueryTimeout, t, ctx.Err())
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
			return nil, runError(ctx, s.opts.QueryTimeout, t, err)
		}
		defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep or lose
		rd = tx
	}

	res := &ir.Result{Bounds: bounds, Path: ir.PathSQLite}
	withUnits := needs.Units || needs.Key
	if res.Cells, res.DomainComplete, err = readCells(ctx, rd, text, args, shape, withUnits, needs.Key); err != nil {
		var pe *pgerror.Error
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, runError(ctx, s.opts.QueryTimeout, t, err)
	}
	if needs.TableSize {
		if err := rd.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+quoteIdent(t.Name)).Scan(&res.TableSize); err != nil {
			return nil, runError(ctx, s.opts.QueryTimeout, t, err)
		}
	}
	if needs.Conditions {
		res.Conditions = Conditions(q)
	}
	return res, nil
}

// CheckUnitKeyed verifies a table's unit_keyed declaration: no row without a
// unit, no unit with two rows. The error names no value.
func (s *Store) CheckUnitKeyed(ctx context.Context, t *ir.Table) error {
	unit, table := quoteIdent(t.PrivacyUnit), quoteIdent(t.Name)
	var broken int
	err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT 1 FROM "+table+" WHERE "+unit+" IS NULL "+
		"UNION ALL SELECT 1 FROM (SELECT 1 FROM "+table+" GROUP BY "+unit+" HAVING COUNT(*) > 1) AS dup) AS broken").Scan(&broken)
	if err != nil {
		return fmt.Errorf("planner: checking that table %q is keyed by its unit: %w", t.Name, err)
	}
	if broken > 0 {
		return ErrNotUnitKeyed
	}
	return nil
}

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"countwall/ir"
	"countwall/planner/plan"
	"countwall/planner/sqlgen"
)

// Store is the protected database, opened read-only. It is safe for
// concurrent use: database/sql pools its connections.
type Store struct {
	db   *sql.DB
	opts plan.StoreOptions
}

// Open opens the protected SQLite file read-only. The file must exist:
// SQLite's mode=ro never creates one, and a typo in a path should say so
// rather than show an empty database. Every connection is also query_only, so
// a write is refused twice over, and LIKE is case-sensitive as in PostgreSQL.
func Open(path string, opts plan.StoreOptions) (*Store, error) {
	opts = opts.WithDefaults()
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
	db, err := sql.Open("sqlite", plan.ReadOnlyDSN(path, opts))
	if err != nil {
		return nil, fmt.Errorf("planner: opening the protected database %q: %w", path, err)
	}
	db.SetMaxOpenConns(opts.MaxOpenConns)
	db.SetMaxIdleConns(opts.MaxOpenConns)
	// Reading the schema proves the file is a SQLite database now rather than
	// at the first analyst query.
	// Opening is not an analyst's query: a short statement deadline (tests
	// use milliseconds) must not fail it on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), max(opts.QueryTimeout, plan.DefaultQueryTimeout))
	defer cancel()
	var tables int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_schema").Scan(&tables); err != nil {
		db.Close()
		return nil, fmt.Errorf("planner: opening the protected database %q: %w", path, err)
	}
	return &Store{db: db, opts: opts}, nil
}

// Close closes the pool.
func (s *Store) Close() error { return s.db.Close() }

// Columns lists a table's columns in declaration order.
func (s *Store) Columns(ctx context.Context, table string) ([]ir.ColumnInfo, error) {
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
	shape, bounds, rank, err := plan.Prepare(t, q, needs, secret)
	if err != nil {
		return nil, err
	}
	var text string
	var args []any
	switch {
	case q.HasSums():
		sumNeeds, _ := plan.UnitKeyedSums(t, q, needs)
		text, args, err = sqlgen.SQLiteSums(t, q, sumNeeds)
	case needs.Bound:
		text, args, err = sqlgen.SQLiteBounded(t, q, needs, bounds, rank, secret)
	default:
		text, args, err = sqlgen.SQLite(t, q, needs, secret)
	}
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()

	var rd plan.Querier = s.db
	if needs.TableSize {
		tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return nil, plan.RunError(ctx, s.opts.QueryTimeout, t, err)
		}
		defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep or lose
		rd = tx
	}

	res := &ir.Result{Bounds: bounds, Path: ir.PathSQLite}
	withUnits := needs.Units || needs.Key
	if q.HasSums() {
		sumNeeds, keyed := plan.UnitKeyedSums(t, q, needs)
		l := plan.NewSumsLayout(t, q, sumNeeds)
		l.Bounds, l.Rank, l.Secret = bounds, rank, secret
		res.Cells, res.DomainComplete, err = plan.ReadSums(ctx, rd, text, args, shape, l)
		if keyed {
			plan.UnitsFromRows(res.Cells)
		}
	} else {
		res.Cells, res.DomainComplete, err = plan.ReadCells(ctx, rd, text, args, shape, withUnits, needs.Key)
	}
	if err != nil {
		return nil, plan.ReadError(ctx, s.opts.QueryTimeout, t, err)
	}
	if err := plan.AddExtras(ctx, rd, s.opts.QueryTimeout, t, q, needs, sqlgen.TableSize(t), res); err != nil {
		return nil, err
	}
	return res, nil
}

// CheckUnitKeyed verifies a table's unit_keyed declaration: no row without a
// unit, no unit with two rows. The error names no value.
func (s *Store) CheckUnitKeyed(ctx context.Context, t *ir.Table) error {
	return plan.CheckUnitKeyed(ctx, s.db, t, sqlgen.UnitKeyedCheck(t))
}

// DB is the read-only pool the store reads through.
func (s *Store) DB() *sql.DB { return s.db }

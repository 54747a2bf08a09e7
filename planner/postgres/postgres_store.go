package postgres

import (
	"cmp"
	"context"
	"countwall/ir"
	"countwall/pgerror"
	"countwall/planner/plan"
	"countwall/planner/sqlgen"
	"database/sql"
	"errors"
	"fmt"
	neturl "net/url"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// IsPostgresURL reports whether a database setting names a PostgreSQL
// server (postgres:// or postgresql://) rather than a SQLite file.
func IsPostgresURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// StoreName is a database setting as messages and logs may show it: a file
// path as it is, a PostgreSQL URL without its password or parameters.
func StoreName(s string) string {
	if !IsPostgresURL(s) {
		return s
	}
	return RedactURL(s)
}

// RedactURL is a PostgreSQL URL without its password or parameters.
func RedactURL(s string) string {
	cfg, err := pgx.ParseConfig(s)
	if err != nil {
		return "the PostgreSQL URL"
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

// Store is a protected PostgreSQL database, opened read-only. It is safe
// for concurrent use: database/sql pools its connections.
type Store struct {
	db   *sql.DB
	opts plan.StoreOptions

	// kinds is how each table's columns are referred to, learnt when
	// Columns reads them.
	mu    sync.Mutex
	kinds map[string]map[string]sqlgen.PgKind // table -> column -> kind
	// hmac is set when the URL asks for keys by pgcrypto and its hmac() is
	// callable: contributor keys are then computed in PostgreSQL, and only
	// the cells travel.
	hmac bool
}

// Open connects to the protected PostgreSQL database. Every
// session of the pool is read-only (default_transaction_read_only), so a
// write is refused by the server whatever SQL reaches it; docs/operator.md says how
// to give the firewall a role that may only SELECT besides.
//
// The URL parameter countwall_keys=pgcrypto computes contributor keys in
// PostgreSQL with pgcrypto's hmac() (the firewall secret is then sent as a
// bound parameter); by default they are computed in the firewall from one
// row per contributing unit, which measured faster on one machine (bench
// postgres: cellkey 6.7x the raw COUNT against 10.9x).
func Open(rawURL string, opts plan.StoreOptions) (*Store, error) {
	opts = opts.WithDefaults()
	url, keysInDB, err := keysOption(rawURL)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("planner: the protected database URL is not a PostgreSQL URL: %w", err)
	}
	cfg.RuntimeParams["default_transaction_read_only"] = "on"
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "countwall"
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(opts.MaxOpenConns)
	db.SetMaxIdleConns(opts.MaxOpenConns)
	ctx, cancel := context.WithTimeout(context.Background(), max(opts.QueryTimeout, plan.DefaultQueryTimeout))
	defer cancel()
	var readOnly string
	if err := db.QueryRowContext(ctx, "SHOW transaction_read_only").Scan(&readOnly); err != nil {
		db.Close()
		return nil, fmt.Errorf("planner: opening the protected database %s: %w", RedactURL(url), err)
	}
	if readOnly != "on" {
		db.Close()
		return nil, fmt.Errorf("planner: opening the protected database %s: its sessions are not read-only", RedactURL(url))
	}
	st := &Store{db: db, opts: opts, kinds: map[string]map[string]sqlgen.PgKind{}}
	if keysInDB {
		if err := db.QueryRowContext(ctx, "SELECT to_regprocedure('hmac(bytea, bytea, text)') IS NOT NULL").Scan(&st.hmac); err != nil {
			db.Close()
			return nil, fmt.Errorf("planner: opening the protected database %s: %w", RedactURL(url), err)
		}
		if !st.hmac {
			db.Close()
			return nil, fmt.Errorf("planner: countwall_keys=pgcrypto, but pgcrypto's hmac() is not callable in %s: its owner must CREATE EXTENSION pgcrypto", RedactURL(url))
		}
	}
	return st, nil
}

// keysOption takes the countwall_keys parameter out of a store URL (it is
// the firewall's, not a PostgreSQL setting) and reports whether it asks for
// keys computed by pgcrypto.
func keysOption(rawURL string) (string, bool, error) {
	u, err := neturl.Parse(rawURL)
	if err != nil {
		return "", false, fmt.Errorf("planner: the protected database URL is not a PostgreSQL URL: %w", err)
	}
	q := u.Query()
	mode := q.Get("countwall_keys")
	q.Del("countwall_keys")
	u.RawQuery = q.Encode()
	switch mode {
	case "", "firewall":
		return u.String(), false, nil
	case "pgcrypto":
		return u.String(), true, nil
	}
	return "", false, fmt.Errorf("planner: countwall_keys=%q in the protected database URL: use pgcrypto or firewall", mode)
}

// pgColumns lists a table of the current schema (search_path) in declaration
// order. PostgreSQL's names are case-sensitive: the configured table name
// must be the stored one.
func (s *Store) Columns(ctx context.Context, table string) ([]ir.ColumnInfo, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, fmt.Errorf("planner: reading the columns of table %q: %w", table, err)
	}
	defer rows.Close()
	var cols []ir.ColumnInfo
	kinds := map[string]sqlgen.PgKind{}
	for rows.Next() {
		var name, dataType string
		if err := rows.Scan(&name, &dataType); err != nil {
			return nil, fmt.Errorf("planner: reading the columns of table %q: %w", table, err)
		}
		kind, typ := sqlgen.PgKindOf(dataType)
		kinds[name] = kind
		cols = append(cols, ir.ColumnInfo{Name: name, Type: typ})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("planner: reading the columns of table %q: %w", table, err)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("planner: table %q is not in the protected database (PostgreSQL names are case-sensitive)", table)
	}
	s.mu.Lock()
	s.kinds[table] = kinds
	s.mu.Unlock()
	return cols, nil
}

// pgDialect is the dialect of a table's columns, read from the catalog when
// Columns has not read them yet.
func (s *Store) pgDialect(ctx context.Context, table string) (sqlgen.PostgresDialect, error) {
	s.mu.Lock()
	kinds, ok := s.kinds[table]
	s.mu.Unlock()
	if !ok {
		if _, err := s.Columns(ctx, table); err != nil {
			return sqlgen.PostgresDialect{}, err
		}
		return s.pgDialect(ctx, table)
	}
	return sqlgen.PostgresDialect{Kinds: kinds}, nil
}

// Run computes the cells of a validated query in PostgreSQL, as the SQLite
// backend does in SQLite. Plain counts and units are one aggregate
// in PostgreSQL; contributor keys and bounded counts need the firewall's
// keyed hashes, so PostgreSQL returns one row per (cell, unit) with the
// unit's row count and Go finishes the cells exactly as the SQLite path's
// countwall_record_key and countwall_cell_rank do; with
// countwall_keys=pgcrypto the keys are computed by PostgreSQL instead.
func (s *Store) Run(ctx context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (*ir.Result, error) {
	if needs.Bound && needs.Key {
		return nil, pgerror.Errorf(pgerror.InternalError, "planner: contributor keys are not computed under contribution bounds")
	}
	shape, bounds, rank, err := plan.Prepare(t, q, needs, secret)
	if err != nil {
		return nil, err
	}
	if needs.Bound && (bounds.MaxRowsPerUnit < 1 || bounds.MaxGroupsPerUnit < 1) {
		return nil, pgerror.Errorf(pgerror.InternalError, "planner: contribution bounds must be >= 1, got %d rows and %d groups per unit", bounds.MaxRowsPerUnit, bounds.MaxGroupsPerUnit)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	d, err := s.pgDialect(ctx, t.Name)
	if err != nil {
		return nil, plan.RunError(ctx, s.opts.QueryTimeout, t, err)
	}
	// A bound of one row per unit with no cells to choose is
	// COUNT(DISTINCT unit), answered in PostgreSQL as on SQLite.
	perUnit := needs.Key || (needs.Bound && (rank || bounds.MaxRowsPerUnit > 1))
	keysInSQL := needs.Key && !needs.Bound && s.hmac && d.HashableUnit(t)
	var text string
	var args []any
	if q.HasSums() {
		return s.runSums(ctx, t, q, needs, d, shape, plan.SumsLayout{Bounds: bounds, Rank: rank, Secret: secret})
	}
	if keysInSQL {
		perUnit = false
		text, args, err = sqlgen.PostgresKeys(t, q, d, secret)
	} else {
		text, args, err = sqlgen.Postgres(t, q, needs, perUnit, d)
	}
	if err != nil {
		return nil, err
	}
	var rd plan.Querier = s.db
	if needs.TableSize {
		// The cells and the table size are read in one snapshot.
		tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
		if err != nil {
			return nil, plan.RunError(ctx, s.opts.QueryTimeout, t, err)
		}
		defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep or lose
		rd = tx
	}

	res := &ir.Result{Bounds: bounds, Path: ir.PathPostgres}
	var cells []ir.Cell
	if perUnit {
		cells, err = s.pgReadUnits(ctx, rd, text, args, q, needs, shape, bounds, rank, secret)
	} else {
		cells, err = s.pgReadCells(ctx, rd, text, args, shape, needs.Units || keysInSQL, keysInSQL)
	}
	if err != nil {
		return nil, plan.ReadError(ctx, s.opts.QueryTimeout, t, err)
	}
	res.Cells, res.DomainComplete, err = assembleCells(shape, cells)
	if err != nil {
		return nil, err
	}
	if err := plan.AddExtras(ctx, rd, s.opts.QueryTimeout, t, q, needs, sqlgen.TableSize(t), res); err != nil {
		return nil, err
	}
	return res, nil
}

// runSums computes the cells of a query with sums (plan.SumsLayout).
// bounded carries the contribution bounds and the choice of cells.
func (s *Store) runSums(ctx context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, d sqlgen.PostgresDialect, shape *plan.Shape, bounded plan.SumsLayout) (*ir.Result, error) {
	needs, keyed := plan.UnitKeyedSums(t, q, needs)
	text, args, err := sqlgen.PostgresSums(t, q, needs, d)
	if err != nil {
		return nil, err
	}
	var rd plan.Querier = s.db
	if needs.TableSize {
		tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
		if err != nil {
			return nil, plan.RunError(ctx, s.opts.QueryTimeout, t, err)
		}
		defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep or lose
		rd = tx
	}
	l := plan.NewSumsLayout(t, q, needs)
	l.Bounds, l.Rank, l.Secret = bounded.Bounds, bounded.Rank, bounded.Secret
	if shape.Product == nil {
		l.MaxCells = shape.MaxGroups
	}
	var cells []ir.Cell
	err = plan.ScanSums(ctx, rd, text, args, l, func(c ir.Cell) error {
		cells = append(cells, c)
		return nil
	})
	if err != nil {
		return nil, plan.ReadError(ctx, s.opts.QueryTimeout, t, err)
	}
	res := &ir.Result{Path: ir.PathPostgres, Bounds: bounded.Bounds}
	if res.Cells, res.DomainComplete, err = assembleCells(shape, cells); err != nil {
		return nil, err
	}
	if keyed {
		plan.UnitsFromRows(res.Cells)
	}
	if err := plan.AddExtras(ctx, rd, s.opts.QueryTimeout, t, q, needs, sqlgen.TableSize(t), res); err != nil {
		return nil, err
	}
	return res, nil
}

// pgReadCells reads rows that are cells already, stopping past the group
// limit (the accumulator then refuses the query).
func (s *Store) pgReadCells(ctx context.Context, rd plan.Querier, text string, args []any, shape *plan.Shape, withUnits, withKey bool) ([]ir.Cell, error) {
	var cells []ir.Cell
	err := plan.ScanCells(ctx, rd, text, args, len(shape.Columns), withUnits, withKey, func(c ir.Cell) error {
		cells = append(cells, c)
		if shape.Product == nil && len(cells) > shape.MaxGroups {
			return errEnoughCells
		}
		return nil
	})
	if errors.Is(err, errEnoughCells) {
		err = nil
	}
	return cells, err
}

// errEnoughCells stops a scan that has read more cells than a query may have.
var errEnoughCells = errors.New("more cells than the group limit")

// rankedPair is one unit's rows in one cell, with the cell's keyed rank.
type rankedPair struct {
	cell int // index into the cells being built
	rows int64
	rank int64
}

// pgReadUnits reads one row per (group, unit) and computes each cell's count,
// units and contributor key, or its bounded count, in Go.
func (s *Store) pgReadUnits(ctx context.Context, rd plan.Querier, text string, args []any, q *ir.Query, needs ir.Needs, shape *plan.Shape, b ir.Bounds, rank bool, secret []byte) ([]ir.Cell, error) {
	rows, err := rd.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ng := len(shape.Columns)
	vals := make([]any, ng+1)
	var n int64
	dest := make([]any, 0, ng+2)
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	dest = append(dest, &n)

	var cells []ir.Cell
	index := map[string]int{}
	byUnit := map[string][]rankedPair{} // ranked: each unit's cells
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		group := make([]ir.GroupValue, ng)
		for i := range ng {
			group[i] = plan.GroupValueOf(vals[i])
		}
		gk := plan.GroupKey(group)
		ci, ok := index[gk]
		if !ok {
			ci = len(cells)
			index[gk] = ci
			cells = append(cells, ir.Cell{Group: group, InDomain: true})
			if shape.Product == nil && len(cells) > shape.MaxGroups {
				return cells, nil // the accumulator refuses the query
			}
		}
		unit := vals[ng]
		c := &cells[ci]
		switch {
		case !needs.Bound:
			if unit != nil {
				c.Units++
				c.Key += plan.RecordKey(secret, unit)
			}
			if q.Agg != ir.CountDistinct {
				c.Count += n
			} else if unit != nil {
				c.Count++
			}
		case rank:
			uk := plan.GroupKey([]ir.GroupValue{plan.GroupValueOf(unit)})
			byUnit[uk] = append(byUnit[uk], rankedPair{cell: ci, rows: n, rank: plan.CellRank(secret, unit, vals[:ng]...)})
		default:
			// Bounded: rows without a unit were left out by the SQL.
			c.Count += min(n, b.MaxRowsPerUnit)
			c.Units++
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	keepRanked(cells, byUnit, shape, b)
	return cells, nil
}

// keepRanked adds to cells each unit's G pairs of smallest rank; the group
// values break the (improbable) ties, as the SQLite rendering's ORDER BY
// does.
func keepRanked(cells []ir.Cell, byUnit map[string][]rankedPair, shape *plan.Shape, b ir.Bounds) {
	for _, pairs := range byUnit {
		slices.SortFunc(pairs, func(x, y rankedPair) int {
			if x.rank != y.rank {
				return cmp.Compare(x.rank, y.rank)
			}
			for i, col := range shape.Columns {
				if c := plan.CompareGroupValues(cells[x.cell].Group[i], cells[y.cell].Group[i], col.Type); c != 0 {
					return c
				}
			}
			return 0
		})
		for _, p := range pairs[:min(int64(len(pairs)), b.MaxGroupsPerUnit)] {
			cells[p.cell].Count += min(p.rows, b.MaxRowsPerUnit)
			cells[p.cell].Units++
		}
	}
}

// assembleCells puts cells read in any order into the answer's shape: the
// domain product when every group column has a domain, else the groups in
// SQLite's order (NULL first, numbers, text bytewise), then ORDER BY.
func assembleCells(shape *plan.Shape, cells []ir.Cell) ([]ir.Cell, bool, error) {
	if shape.Product == nil {
		slices.SortFunc(cells, func(a, b ir.Cell) int {
			for i, col := range shape.Columns {
				if c := plan.CompareGroupValues(a.Group[i], b.Group[i], col.Type); c != 0 {
					return c
				}
			}
			return 0
		})
	}
	acc := shape.NewAccumulator()
	for _, c := range cells {
		if err := acc.Add(c); err != nil {
			return nil, false, err
		}
	}
	out := acc.Result()
	shape.Order(out)
	return out, shape.Complete, nil
}

// Close closes the pool.
func (s *Store) Close() error { return s.db.Close() }

// CheckUnitKeyed verifies a table's unit_keyed declaration: no row without a
// unit, no unit with two rows. The error names no value.
func (s *Store) CheckUnitKeyed(ctx context.Context, t *ir.Table) error {
	return plan.CheckUnitKeyed(ctx, s.db, t, sqlgen.UnitKeyedCheck(t))
}

// KeysInDatabase reports whether contributor keys are computed in
// PostgreSQL by pgcrypto's hmac() (countwall_keys=pgcrypto) rather than in
// the firewall.
func (s *Store) KeysInDatabase() bool { return s.hmac }

// DB is the read-only pool the store reads through.
func (s *Store) DB() *sql.DB { return s.db }

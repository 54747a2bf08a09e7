package proxy

import (
	"context"
	"errors"

	"countwall/config"
	"countwall/ir"
	"countwall/planner/grouped"
	"countwall/planner/plan"
	"countwall/planner/postgres"
	"countwall/planner/snapshot"
	"countwall/planner/sqlite"
)

// Backend computes a validated query's cells from the protected data, and
// exactly the extra figures needs asks for. The executors under planner/
// (SQLite SQL, PostgreSQL SQL, the in-memory snapshot) implement it; so do
// the tests' stand-ins that prove a refused statement never reads.
type Backend interface {
	Run(ctx context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (*ir.Result, error)
}

// Store is the protected database as the Engine uses it: the backend that
// answers its tables, and what the Engine reads of its schema.
type Store interface {
	Backend
	// Columns lists a table's columns in declaration order.
	Columns(ctx context.Context, table string) ([]ir.ColumnInfo, error)
	// CheckUnitKeyed verifies a table's unit_keyed declaration.
	CheckUnitKeyed(ctx context.Context, t *ir.Table) error
	Close() error
}

// OpenStore opens the protected database read-only, choosing its backend
// once from the address and the options, never from the rows: a postgres://
// URL is answered by PostgreSQL; a SQLite file by its in-memory snapshot,
// which hands SQLite what it cannot hold or answer (or by SQLite alone when
// opts.NoSnapshot).
func OpenStore(path string, opts plan.StoreOptions) (Store, error) {
	if postgres.IsPostgresURL(path) {
		return postgres.Open(path, opts)
	}
	db, err := sqlite.Open(path, opts)
	if err != nil {
		return nil, err
	}
	if opts.NoSnapshot {
		return db, nil
	}
	snap, err := snapshot.Open(path, opts, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &snapshotStore{Store: db, snap: snap}, nil
}

// snapshotStore is a SQLite file answered by its snapshot first.
type snapshotStore struct {
	*sqlite.Store
	snap *snapshot.Store
}

func (s *snapshotStore) Run(ctx context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (*ir.Result, error) {
	return s.snap.Run(ctx, t, q, needs, secret)
}

func (s *snapshotStore) Close() error { return errors.Join(s.snap.Close(), s.Store.Close()) }

// Preload reads a table into memory before its first query (Engine.Preload).
func (s *snapshotStore) Preload(ctx context.Context, t *ir.Table) error {
	return s.snap.Preload(ctx, t)
}

// preloader is a Store that keeps tables in memory and can read one ahead
// of its first query.
type preloader interface {
	Preload(ctx context.Context, t *ir.Table) error
}

// openProtected opens the data the Engine protects: the config's database,
// or the grouped stand-in the options hand it.
func openProtected(cfg *config.Config, opts Options, onSnapshot func(plan.SnapshotInfo)) (Store, error) {
	if opts.Grouped != nil {
		return grouped.New(*opts.Grouped)
	}
	return OpenStore(cfg.Database, plan.StoreOptions{QueryTimeout: cfg.Server.QueryTimeout, OnSnapshot: onSnapshot})
}

// GroupsFromSQLite reads a protected SQLite table's groups over columns,
// summing record keys under secret as every backend does, so that the
// AdditiveKeys model answers exactly as the SQLite backend would.
func GroupsFromSQLite(ctx context.Context, path, table, unit string, columns []string, secret []byte) ([]ir.GroupedColumn, []ir.Group, error) {
	return grouped.FromSQLite(ctx, path, table, unit, columns, secret)
}

// StoreName is the protected database's address as logs may show it: a
// PostgreSQL URL without its password.
func StoreName(path string) string { return postgres.StoreName(path) }

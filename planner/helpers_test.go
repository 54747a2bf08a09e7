package planner

import (
	"context"
	"database/sql"
	"errors"

	"countwall/ir"
	"countwall/planner/plan"
	"countwall/planner/postgres"
	"countwall/planner/snapshot"
	"countwall/planner/sqlite"
)

// Store is the protected database opened as the Engine opens it
// (proxy.OpenStore), with the snapshot kept apart so that a test can ask it
// alone.
type Store struct {
	sql interface {
		Run(ctx context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (*ir.Result, error)
		Columns(ctx context.Context, table string) ([]ir.ColumnInfo, error)
		CheckUnitKeyed(ctx context.Context, t *ir.Table) error
		Close() error
	}
	snap *snapshot.Store // nil when opts.NoSnapshot or on PostgreSQL
}

// OpenStore opens path with the backends proxy.OpenStore chooses.
func OpenStore(path string, opts plan.StoreOptions) (*Store, error) {
	if postgres.IsPostgresURL(path) {
		pg, err := postgres.Open(path, opts)
		if err != nil {
			return nil, err
		}
		return &Store{sql: pg}, nil
	}
	db, err := sqlite.Open(path, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{sql: db}
	if !opts.NoSnapshot {
		if s.snap, err = snapshot.Open(path, opts, db); err != nil {
			db.Close()
			return nil, err
		}
	}
	return s, nil
}

func (s *Store) Run(ctx context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (*ir.Result, error) {
	if s.snap != nil {
		return s.snap.Run(ctx, t, q, needs, secret)
	}
	return s.sql.Run(ctx, t, q, needs, secret)
}

func (s *Store) Columns(ctx context.Context, table string) ([]ir.ColumnInfo, error) {
	return s.sql.Columns(ctx, table)
}

func (s *Store) CheckUnitKeyed(ctx context.Context, t *ir.Table) error {
	return s.sql.CheckUnitKeyed(ctx, t)
}

func (s *Store) Close() error {
	var err error
	if s.snap != nil {
		err = s.snap.Close()
	}
	return errors.Join(err, s.sql.Close())
}

// db is the store's read-only pool, for tests that a write through it is
// refused.
func (s *Store) db() *sql.DB { return s.sql.(interface{ DB() *sql.DB }).DB() }

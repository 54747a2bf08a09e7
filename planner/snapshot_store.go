package planner

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// defaultSnapshotMaxBytes bounds one table's snapshot unless StoreOptions says
// otherwise; a larger table is answered by SQLite alone.
const defaultSnapshotMaxBytes = 1 << 30

// snapshots keeps one snapshot per table and checks, before every query, that
// the protected file has not changed since it was read. SQLite's data_version
// is per connection, so one pinned connection both reads the snapshots and
// asks for the version; a commit by any other connection or process changes
// it, and the next query then reads the table again.
type snapshots struct {
	db       *sql.DB // one connection, separate from the query pool
	maxBytes int64
	onBuild  func(SnapshotInfo)

	mu     sync.Mutex // guards conn and tables; held while a snapshot is read
	conn   *sql.Conn
	tables map[string]*snapshotSlot
}

// snapshotSlot is a table's snapshot, or why it has none at a data version.
type snapshotSlot struct {
	snap          *tableSnapshot
	failedVersion int64 // the version at which reading failed (-1: none)
}

func openSnapshots(dsn string, opts StoreOptions) (*snapshots, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	max := opts.SnapshotMaxBytes
	if max <= 0 {
		max = defaultSnapshotMaxBytes
	}
	return &snapshots{db: db, maxBytes: max, onBuild: opts.OnSnapshot, tables: map[string]*snapshotSlot{}}, nil
}

func (s *snapshots) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	return s.db.Close()
}

// current returns the snapshot of table as the file is now, reading it first
// when there is none or the file has changed. It returns nil when the table
// cannot be held (too large, or reading it failed): SQLite answers then.
func (s *snapshots) current(ctx context.Context, table string) (*tableSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		s.conn = conn
	}
	var version int64
	if err := s.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&version); err != nil {
		return nil, err
	}
	slot := s.tables[table]
	if slot == nil {
		slot = &snapshotSlot{failedVersion: -1}
		s.tables[table] = slot
	}
	if slot.snap != nil && slot.snap.version == version {
		return slot.snap, nil
	}
	if slot.failedVersion == version {
		return nil, nil
	}
	slot.snap = nil // a stale snapshot is never used again; free it before reading
	start := time.Now()
	snap, err := readSnapshot(ctx, s.conn, table, s.maxBytes, func(rows int) {
		if s.onBuild != nil {
			s.onBuild(SnapshotInfo{Table: table, Rows: rows, Took: time.Since(start), InProgress: true})
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		slot.failedVersion = version
		if s.onBuild != nil {
			s.onBuild(SnapshotInfo{Table: table, Took: time.Since(start), Err: fmt.Errorf("planner: reading table %q into memory: %w", table, err)})
		}
		return nil, nil
	}
	slot.snap = snap
	if s.onBuild != nil {
		s.onBuild(SnapshotInfo{Table: table, Rows: snap.rows, Columns: len(snap.columns), Bytes: snap.bytes, Took: time.Since(start)})
	}
	return snap, nil
}

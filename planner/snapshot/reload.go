package snapshot

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"time"

	"countwall/planner/plan"
)

// snapshots keeps one snapshot per table and checks, before every query, that
// the protected file has not changed since it was read. In rollback-journal
// mode (SQLite's default) every commit increments the file change counter in
// the database header (offset 24), so four bytes read from the file tell; a
// snapshot is labelled with the counter read while its read transaction
// holds the shared lock, when no commit can happen. In WAL mode commits leave
// that counter alone, so the pinned connection's PRAGMA data_version is
// asked instead (about 20 times slower: a statement through the driver), on
// one pinned connection; a snapshot read on another connection is labelled
// with the data_version seen just before it began, so a commit during the
// read makes the next query read again.
// Either way a commit by any other connection or process is seen by the next
// query, which then reads the table again.
type snapshots struct {
	Db       *sql.DB // one connection, separate from the query pool
	path     string  // the protected file, whose header counts commits
	maxBytes int64
	onBuild  func(plan.SnapshotInfo)

	// Reads run on their own connections from db, under ctx, which close
	// cancels; builds counts them.
	ctx    context.Context
	stop   context.CancelFunc
	builds sync.WaitGroup

	mu     sync.Mutex // guards conn (which asks data_version), file and tables
	conn   *sql.Conn
	file   *os.File
	tables map[string]*snapshotSlot
}

// snapshotSlot is a table's snapshot, or why it has none at a data version.
type snapshotSlot struct {
	snap          *Table
	failedVersion int64         // the version at which reading failed (-1: none)
	reading       chan struct{} // closed when the read in progress ends; nil when none
}

func openSnapshots(path, dsn string, opts plan.StoreOptions) (*snapshots, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4) // the version connection and reads of up to three tables at once
	db.SetMaxIdleConns(1)
	max := opts.SnapshotMaxBytes
	if max <= 0 {
		max = plan.DefaultSnapshotMaxBytes
	}
	ctx, stop := context.WithCancel(context.Background())
	return &snapshots{Db: db, path: path, maxBytes: max, onBuild: opts.OnSnapshot, ctx: ctx, stop: stop,
		tables: map[string]*snapshotSlot{}}, nil
}

// fileVersion is the file change counter from the database header, or -1
// when the file is in WAL mode (or the header cannot be read), where only
// data_version tells.
func (s *snapshots) fileVersion() int64 {
	if s.file == nil {
		return -1
	}
	var h [100]byte
	if _, err := s.file.ReadAt(h[:], 0); err != nil {
		return -1
	}
	// Bytes 18 and 19 are the write and read format versions: 2 means WAL.
	if h[18] == 2 || h[19] == 2 {
		return -1
	}
	return int64(binary.BigEndian.Uint32(h[24:28]))
}

// version is the protected file's version as the snapshots label it: the
// header's change counter, or data_version (offset past any counter) in WAL
// mode. Called with s.mu held.
func (s *snapshots) version(ctx context.Context) (int64, error) {
	if v := s.fileVersion(); v >= 0 {
		return v, nil
	}
	var v int64
	if err := s.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return 0, err
	}
	return v + 1<<40, nil
}

func (s *snapshots) close() error {
	s.stop() // a read in progress ends at its next row
	s.builds.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
	return s.Db.Close()
}

// current returns the snapshot of table as the file is now, reading it first
// when there is none or the file has changed, or when unit names a column
// its rows are not yet numbered in the order of (the config named another). The read runs on its own, so a
// query whose deadline ends first does not end it: the query gets ctx's
// error and a later one finds the snapshot. It returns nil when the table
// cannot be held (too large, or reading it failed): SQLite answers then.
func (s *snapshots) current(ctx context.Context, table, unit string) (*Table, error) {
	s.mu.Lock()
	if s.conn == nil {
		conn, err := s.Db.Conn(ctx)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.conn = conn
		if f, err := os.Open(s.path); err == nil { // read-only; without it data_version tells
			s.file = f
		}
	}
	version, err := s.version(ctx)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	slot := s.tables[table]
	if slot == nil {
		slot = &snapshotSlot{failedVersion: -1}
		s.tables[table] = slot
	}
	// The snapshot is taken while the lock is held: once it is released,
	// a read for another unit may replace the slot's.
	if snap := slot.snap; snap != nil && snap.version == version && snap.orderedFor(unit) {
		s.mu.Unlock()
		return snap, nil
	}
	if slot.failedVersion == version {
		s.mu.Unlock()
		return nil, nil
	}
	if slot.reading == nil {
		slot.snap = nil // a stale snapshot is never used again; free it before reading
		slot.reading = make(chan struct{})
		s.builds.Add(1)
		go s.read(table, unit, slot, version)
	}
	done := slot.reading
	s.mu.Unlock()

	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slot.snap != nil && slot.snap.version >= version {
		return slot.snap, nil
	}
	return nil, nil // reading failed, or the file changed again: SQLite answers
}

// read reads table into slot, its rows in the order of unit when it names
// a column; version is the file's version seen before.
func (s *snapshots) read(table, unit string, slot *snapshotSlot, version int64) {
	defer s.builds.Done()
	start := time.Now()
	snap, err := func() (*Table, error) {
		conn, err := s.Db.Conn(s.ctx)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		return readSnapshot(s.ctx, conn, table, unit, s.maxBytes, s.fileVersion, version, func(rows int) {
			if s.onBuild != nil {
				s.onBuild(plan.SnapshotInfo{Table: table, Rows: rows, Took: time.Since(start), InProgress: true})
			}
		})
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(slot.reading)
	slot.reading = nil
	if err != nil {
		slot.failedVersion = version
		if s.onBuild != nil && s.ctx.Err() == nil {
			s.onBuild(plan.SnapshotInfo{Table: table, Took: time.Since(start), Err: fmt.Errorf("planner: reading table %q into memory: %w", table, err)})
		}
		return
	}
	slot.snap = snap
	if s.onBuild != nil {
		s.onBuild(plan.SnapshotInfo{Table: table, Rows: snap.rows, Columns: len(snap.columns), Bytes: snap.bytes, Took: time.Since(start)})
	}
}

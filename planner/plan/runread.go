package plan

import (
	"context"
	"countwall/ir"
	"countwall/pgerror"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
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
	DefaultQueryTimeout = 10 * time.Second
	defaultBusyTimeout  = 5 * time.Second
)

func (o StoreOptions) WithDefaults() StoreOptions {
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = DefaultQueryTimeout
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = defaultBusyTimeout
	}
	if o.MaxOpenConns <= 0 {
		o.MaxOpenConns = 2 * runtime.GOMAXPROCS(0)
	}
	return o
}

// ReadOnlyDSN is the read-only URI of the database file. The path is
// percent-escaped so that a '?' or '#' in a file name stays part of it.
func ReadOnlyDSN(path string, opts StoreOptions) string {
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

// Querier is what Run reads through: the pool, or a transaction when two
// statements must see one snapshot.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// RunError turns a failure into what the caller should see: a cancelled or
// timed-out Run is pgerror.QueryCanceled, as PostgreSQL reports it; anything else
// is wrapped with the table's name. A Run is timed out when its own
// deadline passed or its caller cancelled it with the deadline as the
// cause (the wire's statement timer).
func RunError(ctx context.Context, timeout time.Duration, t *ir.Table, err error) error {
	switch {
	case errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return &pgerror.Error{Code: pgerror.QueryCanceled, Message: "canceling statement due to statement timeout",
			Hint: fmt.Sprintf("The firewall stops a query after %s.", timeout)}
	case ctx.Err() != nil:
		return &pgerror.Error{Code: pgerror.QueryCanceled, Message: "canceling statement due to user request"}
	}
	return fmt.Errorf("planner: counting in table %q: %w", t.Name, err)
}

// ReadError is RunError for a failure while reading cells, but a refusal
// the reading made itself (a *pgerror.Error, such as more groups than the
// policy allows) passes as it is.
func ReadError(ctx context.Context, timeout time.Duration, t *ir.Table, err error) error {
	var pe *pgerror.Error
	if errors.As(err, &pe) {
		return err
	}
	return RunError(ctx, timeout, t, err)
}

// AddExtras adds to res what needs asks for beside the cells: the table's
// size, counted with sizeSQL through rd (in the cells' snapshot when rd is
// their transaction), and the condition list.
func AddExtras(ctx context.Context, rd Querier, timeout time.Duration, t *ir.Table, q *ir.Query, needs ir.Needs, sizeSQL string, res *ir.Result) error {
	if needs.TableSize {
		if err := rd.QueryRowContext(ctx, sizeSQL).Scan(&res.TableSize); err != nil {
			return RunError(ctx, timeout, t, err)
		}
	}
	if needs.Conditions {
		res.Conditions = Conditions(q)
	}
	return nil
}

// CheckUnitKeyed runs checkSQL, which counts the rows without a unit and
// the units with two rows, and refuses the table's unit_keyed declaration
// when it finds any. The error names no value.
func CheckUnitKeyed(ctx context.Context, rd Querier, t *ir.Table, checkSQL string) error {
	var broken int
	if err := rd.QueryRowContext(ctx, checkSQL).Scan(&broken); err != nil {
		return fmt.Errorf("planner: checking that table %q is keyed by its unit: %w", t.Name, err)
	}
	if broken > 0 {
		return ErrNotUnitKeyed
	}
	return nil
}

// ReadCells runs the compiled SQL and assembles the output cells.
func ReadCells(ctx context.Context, rd Querier, text string, args []any, shape *Shape, withUnits, withKey bool) ([]ir.Cell, bool, error) {
	acc := shape.NewAccumulator()
	err := ScanCells(ctx, rd, text, args, len(shape.Columns), withUnits, withKey, acc.Add)
	if err != nil {
		return nil, false, err
	}
	cells := acc.Result()
	shape.Order(cells)
	return cells, shape.Complete, nil
}

// ScanCells runs SQL whose rows are cells (ng group columns, the count, then
// the units and the contributor key when asked for) and hands each cell to
// add, stopping at the first error add returns.
func ScanCells(ctx context.Context, rd Querier, text string, args []any, ng int, withUnits, withKey bool, add func(ir.Cell) error) error {
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
				c.Group[i] = GroupValueOf(v)
			}
		}
		if err := add(c); err != nil {
			return err
		}
	}
	return rows.Err()
}

// GroupValueOf renders one group column value as text: integers in decimal,
// reals with the shortest exact form, text and blobs as their bytes.
func GroupValueOf(v any) ir.GroupValue {
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

// SnapshotInfo describes a snapshot the store has built.
type SnapshotInfo struct {
	Table   string
	Rows    int
	Columns int
	Bytes   int64 // estimated memory held
	Took    time.Duration
	// InProgress marks a report made while the table is still being read
	// (Rows so far); Err says why a table is left to SQLite.
	InProgress bool
	Err        error
}

// DefaultSnapshotMaxBytes bounds one table's snapshot unless StoreOptions says
// otherwise; a larger table is answered by SQLite alone.
const DefaultSnapshotMaxBytes = 1 << 30

package plan_test

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"runtime"
	"testing"
	"time"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

// TestStoreOptionsDefaults: zero fields take the defaults, set ones stay.
func TestStoreOptionsDefaults(t *testing.T) {
	got := plan.StoreOptions{}.WithDefaults()
	want := plan.StoreOptions{QueryTimeout: 10 * time.Second, BusyTimeout: 5 * time.Second, MaxOpenConns: 2 * runtime.GOMAXPROCS(0)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	set := plan.StoreOptions{QueryTimeout: time.Second, BusyTimeout: time.Millisecond, MaxOpenConns: 3, SnapshotMaxBytes: 10}
	if got := set.WithDefaults(); !reflect.DeepEqual(got, set) {
		t.Errorf("set options %+v became %+v", set, got)
	}
}

// TestReadOnlyDSN: the file is opened read-only and query-only, with the
// busy timeout and case-sensitive LIKE, and a '?' or '#' in its name stays
// part of the path.
func TestReadOnlyDSN(t *testing.T) {
	got := plan.ReadOnlyDSN("/data/my?file#1.db", plan.StoreOptions{BusyTimeout: 1500 * time.Millisecond})
	want := "file:///data/my%3Ffile%231.db?_pragma=query_only%281%29&_pragma=busy_timeout%281500%29&_pragma=case_sensitive_like%281%29&mode=ro"
	if got != want {
		t.Errorf("ReadOnlyDSN:\n got %s\nwant %s", got, want)
	}
}

// TestRunError: a run past its deadline or cancelled is 57014, as
// PostgreSQL reports it; anything else is wrapped with the table's name,
// and ReadError passes a refusal the reading made itself as it is.
func TestRunError(t *testing.T) {
	people := fixture.People()
	cause := errors.New("disk I/O error")
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	// The wire's statement timer cancels the statement's context with the
	// deadline as the cause; the Run's own deadline has not passed.
	timer, cancel3 := context.WithCancelCause(context.Background())
	cancel3(context.DeadlineExceeded)
	timedOut, cancel4 := context.WithTimeout(timer, time.Hour)
	defer cancel4()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		code pgerror.Code
		msg  string
	}{
		{"deadline", expired, cause, pgerror.QueryCanceled, "canceling statement due to statement timeout"},
		{"cancel", cancelled, cause, pgerror.QueryCanceled, "canceling statement due to user request"},
		{"the caller's deadline", timedOut, cause, pgerror.QueryCanceled, "canceling statement due to statement timeout"},
		{"other", context.Background(), cause, "", `planner: counting in table "people": disk I/O error`},
	} {
		err := plan.RunError(tc.ctx, 3*time.Second, people, tc.err)
		if pgerror.SQLState(err) != tc.code || err.Error() != tc.msg {
			t.Errorf("%s: %v (%q), want %q: %s", tc.name, err, pgerror.SQLState(err), tc.code, tc.msg)
		}
	}
	var pe *pgerror.Error
	if err := plan.RunError(expired, 3*time.Second, people, cause); !errors.As(err, &pe) || pe.Hint != "The firewall stops a query after 3s." {
		t.Errorf("the deadline's hint: %+v", pe)
	}
	if err := plan.RunError(context.Background(), time.Second, people, cause); !errors.Is(err, cause) {
		t.Errorf("%v does not wrap its cause", err)
	}
	refusal := pgerror.Errorf(pgerror.ProgramLimitExceeded, "the query has more than the limit of 2 groups")
	if err := plan.ReadError(context.Background(), time.Second, people, refusal); err != refusal {
		t.Errorf("ReadError changed a refusal into %v", err)
	}
	if err := plan.ReadError(context.Background(), time.Second, people, cause); err.Error() != `planner: counting in table "people": disk I/O error` {
		t.Errorf("ReadError of another failure: %v", err)
	}
}

// memoryDB is an empty SQLite database in memory, on one connection.
func memoryDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestReadCells: rows that are cells (group values, the count, units, the
// key) become the answer's cells in its shape, ORDER BY applied, each
// value read as GroupValueOf reads it, the key as its 32 bits.
func TestReadCells(t *testing.T) {
	db := memoryDB(t)
	q := &ir.Query{Table: "people", GroupBy: []string{"sex"}, OrderBy: []ir.Order{{Column: "sex", Desc: true}}}
	shape, err := plan.NewShape(fixture.People(), q)
	if err != nil {
		t.Fatal(err)
	}
	text := `SELECT NULL, 1, 1, 5 UNION ALL SELECT 'F', 3, 2, ? UNION ALL SELECT x'4d', 2, 2, 7`
	cells, complete, err := plan.ReadCells(context.Background(), db, text, []any{int64(4294967296 + 9)}, shape, true, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []ir.Cell{
		{Group: fixture.Group("M"), Count: 2, Units: 2, Key: 7, InDomain: true},
		{Group: fixture.Group("F"), Count: 3, Units: 2, Key: 9, InDomain: true},
		{Group: fixture.Group("NULL"), Count: 1, Units: 1, Key: 5, InDomain: true},
	}
	if complete || !reflect.DeepEqual(cells, want) {
		t.Errorf("cells %+v (complete %v),\nwant %+v (not complete)", cells, complete, want)
	}

	var counts []int64
	err = plan.ScanCells(context.Background(), db, `SELECT 4 UNION ALL SELECT 6`, nil, 0, false, false, func(c ir.Cell) error {
		counts = append(counts, c.Count)
		return nil
	})
	if err != nil || !reflect.DeepEqual(counts, []int64{4, 6}) {
		t.Errorf("counts alone: %v, %v; want [4 6]", counts, err)
	}
	stop := errors.New("enough")
	err = plan.ScanCells(context.Background(), db, `SELECT 4 UNION ALL SELECT 6`, nil, 0, false, false, func(ir.Cell) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("add's error: %v, want %v", err, stop)
	}
}

// TestAddExtrasAndUnitKeyedCheck: the table's size is read through the
// given SQL, the condition list added when asked; a unit_keyed check that
// counts any broken row refuses the declaration without naming a value.
func TestAddExtrasAndUnitKeyedCheck(t *testing.T) {
	db := memoryDB(t)
	people := fixture.People()
	q := &ir.Query{Table: "people", Where: &ir.Compare{Column: "age", Op: "=", Value: fixture.IntLit(30)}}
	res := &ir.Result{}
	if err := plan.AddExtras(context.Background(), db, time.Second, people, q, ir.Needs{TableSize: true, Conditions: true}, `SELECT 13`, res); err != nil {
		t.Fatal(err)
	}
	if res.TableSize != 13 || !reflect.DeepEqual(res.Conditions, []string{"age = 30"}) {
		t.Errorf("extras %+v, want size 13 and [age = 30]", res)
	}
	res = &ir.Result{}
	if err := plan.AddExtras(context.Background(), db, time.Second, people, q, ir.Needs{}, `SELECT no_such_column`, res); err != nil || res.TableSize != 0 || res.Conditions != nil {
		t.Errorf("nothing asked: %+v, %v; want nothing read", res, err)
	}
	if err := plan.CheckUnitKeyed(context.Background(), db, people, `SELECT 0`); err != nil {
		t.Errorf("no broken row: %v", err)
	}
	if err := plan.CheckUnitKeyed(context.Background(), db, people, `SELECT 2`); err != plan.ErrNotUnitKeyed {
		t.Errorf("two broken rows: %v, want ErrNotUnitKeyed", err)
	}
}

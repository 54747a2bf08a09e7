package sqlite_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
	"countwall/planner/sqlite"
)

// openPeople writes the people table's fixed rows, and stmts, to a fresh
// file and opens it.
func openPeople(t *testing.T, opts plan.StoreOptions, stmts ...string) (*sqlite.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "people.db")
	fixture.WritePeople(t, path, fixture.PeopleRows, stmts...)
	s, err := sqlite.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// TestRunFigures holds Run's answers on the fixed rows, figure by figure:
// counts, distinct units and contributor keys, bounded counts with the
// bounds in force, domain filling, ORDER BY, the table's size and the
// condition list, every answer marked as SQLite's.
func TestRunFigures(t *testing.T) {
	s, _ := openPeople(t, plan.StoreOptions{})
	people := fixture.People()
	domains := fixture.People()
	domains.Columns["sex"].Domain = &ir.Domain{Categories: []string{"M", "F"}}
	domains.Columns["age"].Domain = &ir.Domain{IsRange: true, Min: 25, Max: 27}
	sexF := &ir.Compare{Column: "sex", Op: "=", Value: fixture.TextLit("F")}
	cell := func(count, units int64, key uint32, group ...string) ir.Cell {
		c := ir.Cell{Count: count, Units: units, Key: key, InDomain: true}
		if len(group) > 0 {
			c.Group = fixture.Group(group...)
		}
		return c
	}
	for _, tc := range []struct {
		name  string
		tbl   *ir.Table
		q     *ir.Query
		needs ir.Needs
		want  ir.Result
	}{
		{"every row, the one without a unit no unit", people, &ir.Query{Table: "people"}, ir.Needs{Units: true, Key: true},
			ir.Result{Cells: []ir.Cell{cell(13, 9, fixture.KeyOf(1, 2, 3, 4, 5, 6, 7, 8, 9))}, DomainComplete: true}},
		{"a condition, with the table's size and conditions", people, &ir.Query{Table: "people", Where: sexF},
			ir.Needs{Key: true, TableSize: true, Conditions: true},
			ir.Result{Cells: []ir.Cell{cell(6, 4, fixture.KeyOf(1, 3, 6, 8))}, DomainComplete: true, TableSize: 13, Conditions: []string{"sex = 'F'"}}},
		{"COUNT(DISTINCT unit)", people, &ir.Query{Table: "people", Agg: ir.CountDistinct, Where: sexF}, ir.Needs{},
			ir.Result{Cells: []ir.Cell{cell(4, 0, 0)}, DomainComplete: true}},
		{"NULL is neither side of a comparison", people, &ir.Query{Table: "people", Where: &ir.Not{Inner: &ir.Compare{Column: "age", Op: ">", Value: fixture.IntLit(40)}}}, ir.Needs{},
			ir.Result{Cells: []ir.Cell{cell(7, 0, 0)}, DomainComplete: true}},
		{"LIKE is case-sensitive", people, &ir.Query{Table: "people", Where: &ir.Like{Column: "suburb", Pattern: "n%"}}, ir.Needs{},
			ir.Result{Cells: []ir.Cell{cell(0, 0, 0)}, DomainComplete: true}},
		{"GROUP BY without a domain: SQLite's groups, NULL first", people, &ir.Query{Table: "people", GroupBy: []string{"sex"}}, ir.Needs{Units: true},
			ir.Result{Cells: []ir.Cell{cell(1, 1, 0, "NULL"), cell(6, 4, 0, "F"), cell(4, 4, 0, "M"), cell(2, 1, 0, "X")}}},
		{"ORDER BY DESC", people, &ir.Query{Table: "people", GroupBy: []string{"sex"}, OrderBy: []ir.Order{{Column: "sex", Desc: true}}}, ir.Needs{},
			ir.Result{Cells: []ir.Cell{cell(2, 0, 0, "X"), cell(4, 0, 0, "M"), cell(6, 0, 0, "F"), cell(1, 0, 0, "NULL")}}},
		{"over domains: the product in domain order, zeros included", domains, &ir.Query{Table: "people", GroupBy: []string{"sex", "age"}}, ir.Needs{},
			ir.Result{Cells: []ir.Cell{cell(1, 0, 0, "M", "25"), cell(0, 0, 0, "M", "26"), cell(0, 0, 0, "M", "27"),
				cell(2, 0, 0, "F", "25"), cell(0, 0, 0, "F", "26"), cell(0, 0, 0, "F", "27")}, DomainComplete: true}},
		{"bounded at one row a unit", people, &ir.Query{Table: "people", Where: sexF}, ir.Needs{Bound: true, Units: true},
			ir.Result{Cells: []ir.Cell{cell(4, 4, 0)}, DomainComplete: true, Bounds: ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}}},
		{"bounded at two rows a unit", people, &ir.Query{Table: "people", Where: sexF}, ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 2}},
			ir.Result{Cells: []ir.Cell{cell(5, 0, 0)}, DomainComplete: true, Bounds: ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 1}}},
		{"bounded GROUP BY, one cell a unit", people, &ir.Query{Table: "people", GroupBy: []string{"suburb"}, Where: &ir.Compare{Column: "id", Op: "=", Value: fixture.IntLit(4)}},
			ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 5, MaxGroupsPerUnit: 1}},
			ir.Result{Cells: []ir.Cell{cell(1, 0, 0, singleSuburbOfUnit4(t))}, Bounds: ir.Bounds{MaxRowsPerUnit: 5, MaxGroupsPerUnit: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Run(context.Background(), tc.tbl, tc.q, tc.needs, fixture.Secret)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Path = ir.PathSQLite
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

// singleSuburbOfUnit4 is the one of unit 4's two suburbs (East, South) its
// rank keeps under G = 1: the cell of smaller plan.CellRank.
func singleSuburbOfUnit4(t *testing.T) string {
	t.Helper()
	if plan.CellRank(fixture.Secret, int64(4), "East") < plan.CellRank(fixture.Secret, int64(4), "South") {
		return "East"
	}
	return "South"
}

// TestRunRefusals: what Run refuses, with its SQLSTATE: the caller's
// mistakes (XX000) before any read, more groups than the limit (54000,
// with the group limit needs may raise), and a deadline or a cancel
// (57014).
func TestRunRefusals(t *testing.T) {
	s, _ := openPeople(t, plan.StoreOptions{})
	expired, _ := openPeople(t, plan.StoreOptions{QueryTimeout: time.Nanosecond})
	few := fixture.People()
	few.Policy.MaxGroups = 5 // suburb has six groups, NULL among them
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	bySuburb := &ir.Query{Table: "people", GroupBy: []string{"suburb"}}
	for _, tc := range []struct {
		name  string
		s     *sqlite.Store
		ctx   context.Context
		tbl   *ir.Table
		q     *ir.Query
		needs ir.Needs
		code  pgerror.Code
		msg   string
	}{
		{"keys under bounds", s, context.Background(), fixture.People(), &ir.Query{Table: "people"}, ir.Needs{Bound: true, Key: true},
			pgerror.InternalError, "planner: contributor keys are not computed under contribution bounds"},
		{"keys without a secret", s, context.Background(), fixture.People(), &ir.Query{Table: "people"}, ir.Needs{Key: true},
			pgerror.InternalError, "planner: contributor keys need a secret, and none was given"},
		{"one group past the limit", s, context.Background(), few, bySuburb, ir.Needs{},
			pgerror.ProgramLimitExceeded, "the query has more than the limit of 5 groups"},
		{"the statement timeout", expired, context.Background(), fixture.People(), &ir.Query{Table: "people"}, ir.Needs{},
			pgerror.QueryCanceled, "canceling statement due to statement timeout"},
		{"a cancel", s, cancelled, fixture.People(), &ir.Query{Table: "people"}, ir.Needs{TableSize: true},
			pgerror.QueryCanceled, "canceling statement due to user request"},
	} {
		secret := fixture.Secret
		if tc.name == "keys without a secret" {
			secret = nil
		}
		_, err := tc.s.Run(tc.ctx, tc.tbl, tc.q, tc.needs, secret)
		if pgerror.SQLState(err) != tc.code || err.Error() != tc.msg {
			t.Errorf("%s: %v (%q), want %s: %s", tc.name, err, pgerror.SQLState(err), tc.code, tc.msg)
		}
	}
	res, err := s.Run(context.Background(), few, bySuburb, ir.Needs{GroupLimit: 6}, nil)
	if err != nil || len(res.Cells) != 6 {
		t.Errorf("the group limit raised to 6: %v, %v; want the six suburbs", res, err)
	}
}

// TestOpenRefuses: a missing file is named and not created, and a
// directory or a file that is not SQLite is refused at Open, not at the
// first query.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, msg string
	}{
		{"missing", missing, `planner: opening the protected database "` + missing + `": stat ` + missing + `: ` + syscall.ENOENT.Error()},
		{"a directory", dir, `planner: opening the protected database "` + dir + `": not a regular file`},
		{"not SQLite", garbage, `planner: opening the protected database "` + garbage + `": file is not a database (26)`},
	} {
		s, err := sqlite.Open(tc.path, plan.StoreOptions{})
		if err == nil {
			s.Close()
			t.Errorf("%s: opened", tc.name)
			continue
		}
		if err.Error() != tc.msg {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, tc.msg)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open created %s", missing)
	}
}

// TestNothingIsWritten: every write is refused through the store's own
// pool (mode=ro and query_only, even when a statement turns query_only
// off first), reads with keys and the table's size still work, and the
// file and its directory are as they were.
func TestNothingIsWritten(t *testing.T) {
	s, path := openPeople(t, plan.StoreOptions{MaxOpenConns: 2})
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, stmt := range []string{
		`INSERT INTO people VALUES (10, 1, 'F', 'North', 1)`,
		`UPDATE people SET age = 0`,
		`DELETE FROM people`,
		`CREATE TABLE extra (x INTEGER)`,
		`PRAGMA query_only = 0; INSERT INTO people VALUES (10, 1, 'F', 'North', 1)`,
		`PRAGMA user_version = 7`,
	} {
		if _, err := s.DB().ExecContext(ctx, stmt); err == nil {
			t.Errorf("%s: succeeded through the store", stmt)
		}
	}
	for range 3 {
		if _, err := s.Run(ctx, fixture.People(), &ir.Query{Table: "people"}, ir.Needs{Key: true, TableSize: true}, fixture.Secret); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(after) != sha256.Sum256(before) {
		t.Error("the database file changed")
	}
	if entries, err := os.ReadDir(filepath.Dir(path)); err != nil || len(entries) != 1 {
		t.Errorf("files beside the database: %v, %v; want none", entries, err)
	}
}

// TestCheckUnitKeyed: the unit_keyed declaration holds on a table with one
// row per unit and none without, and is refused, naming no value, where a
// unit has two rows or a row has none.
func TestCheckUnitKeyed(t *testing.T) {
	s, _ := openPeople(t, plan.StoreOptions{},
		`CREATE TABLE keyed (id INTEGER, age INTEGER)`, `INSERT INTO keyed VALUES (1, 30), (2, 40), (3, 30)`,
		`CREATE TABLE unitless (id INTEGER, age INTEGER)`, `INSERT INTO unitless VALUES (1, 30), (NULL, 40)`)
	for _, tc := range []struct {
		table string
		want  error
	}{
		{"keyed", nil},
		{"people", plan.ErrNotUnitKeyed},   // unit 1 has two rows, and one row none
		{"unitless", plan.ErrNotUnitKeyed}, // a row without a unit
	} {
		tbl := fixture.People()
		tbl.Name, tbl.UnitKeyed = tc.table, true
		if err := s.CheckUnitKeyed(context.Background(), tbl); err != tc.want {
			t.Errorf("%s: %v, want %v", tc.table, err, tc.want)
		}
	}
}

// TestColumns: a table's columns in declaration order, each declared type read
// by SQLite's affinity rules; the table's name in any case; an unknown
// table refused.
func TestColumns(t *testing.T) {
	s, _ := openPeople(t, plan.StoreOptions{},
		`CREATE TABLE typed (a REAL, b NUMERIC, c VARCHAR(10), d BLOB, e DOUBLE PRECISION, f BOOLEAN, g DATE, h, i BIGINT, j DECIMAL(10,2), k FLOAT)`)
	got, err := s.Columns(context.Background(), "PEOPLE")
	if err != nil {
		t.Fatal(err)
	}
	want := []ir.ColumnInfo{{Name: "id", Type: ir.TypeInt}, {Name: "age", Type: ir.TypeInt}, {Name: "sex", Type: ir.TypeText}, {Name: "suburb", Type: ir.TypeText}, {Name: "income", Type: ir.TypeInt}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("people: got %v, want %v", got, want)
	}
	got, err = s.Columns(context.Background(), "typed")
	if err != nil {
		t.Fatal(err)
	}
	want = []ir.ColumnInfo{{Name: "a", Type: ir.TypeReal}, {Name: "b", Type: ir.TypeReal}, {Name: "c", Type: ir.TypeText}, {Name: "d", Type: ir.TypeText}, {Name: "e", Type: ir.TypeReal},
		{Name: "f", Type: ir.TypeInt}, {Name: "g", Type: ir.TypeText}, {Name: "h", Type: ir.TypeText}, {Name: "i", Type: ir.TypeInt}, {Name: "j", Type: ir.TypeReal}, {Name: "k", Type: ir.TypeReal}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("typed: got %v, want %v", got, want)
	}
	_, err = s.Columns(context.Background(), "people; DROP TABLE people")
	if want := `planner: table "people; DROP TABLE people" is not in the protected database`; err == nil || err.Error() != want {
		t.Errorf("an unknown table: %v, want %s", err, want)
	}
}

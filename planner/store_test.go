package planner

import (
	"context"
	"countwall/ir"
	"countwall/pgerror"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// openTestStore writes the people table to a fresh file and opens it.
func openTestStore(t testing.TB, opts plan.StoreOptions, stmts ...string) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "people.db")
	fixture.WritePeople(t, path, fixture.PeopleRows, stmts...)
	s, err := OpenStore(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestStoreRunCells(t *testing.T) {
	s, _ := openTestStore(t, plan.StoreOptions{})
	people := fixture.People()
	all := ir.Needs{Units: true, Key: true}
	age30 := &ir.Compare{Column: "age", Op: "=", Value: fixture.IntLit(30)}
	cases := []struct {
		name  string
		q     *ir.Query
		needs ir.Needs
		want  []ir.Cell
	}{
		{
			name: "plain count",
			q:    &ir.Query{Table: "people"},
			want: []ir.Cell{{Count: 13, InDomain: true}},
		},
		{
			name:  "plain count with units and key: the row without a unit counts but is no unit",
			q:     &ir.Query{Table: "people"},
			needs: all,
			want:  []ir.Cell{{Count: 13, Units: 9, Key: fixture.KeyOf(1, 2, 3, 4, 5, 6, 7, 8, 9), InDomain: true}},
		},
		{
			name: "count distinct",
			q:    &ir.Query{Table: "people", Agg: ir.CountDistinct},
			want: []ir.Cell{{Count: 9, InDomain: true}},
		},
		{
			name:  "count distinct, per-unit pass",
			q:     &ir.Query{Table: "people", Agg: ir.CountDistinct, Where: age30},
			needs: all,
			want:  []ir.Cell{{Count: 3, Units: 3, Key: fixture.KeyOf(1, 2, 6), InDomain: true}},
		},
		{
			name:  "where with units only",
			q:     &ir.Query{Table: "people", Where: age30},
			needs: ir.Needs{Units: true},
			want:  []ir.Cell{{Count: 4, Units: 3, InDomain: true}},
		},
		{
			name:  "nothing matches: still one cell",
			q:     &ir.Query{Table: "people", Where: &ir.Compare{Column: "age", Op: ">", Value: fixture.IntLit(1000)}},
			needs: all,
			want:  []ir.Cell{{Count: 0, InDomain: true}},
		},
		{
			name:  "group by a column without a domain: the groups SQLite finds, NULL first",
			q:     &ir.Query{Table: "people", GroupBy: []string{"sex"}},
			needs: all,
			want: []ir.Cell{
				{Group: fixture.Group("NULL"), Count: 1, Units: 1, Key: fixture.KeyOf(4), InDomain: true},
				{Group: fixture.Group("F"), Count: 6, Units: 4, Key: fixture.KeyOf(1, 3, 6, 8), InDomain: true},
				{Group: fixture.Group("M"), Count: 4, Units: 4, Key: fixture.KeyOf(2, 4, 5, 9), InDomain: true},
				{Group: fixture.Group("X"), Count: 2, Units: 1, Key: fixture.KeyOf(7), InDomain: true},
			},
		},
		{
			name: "order by an integer column descending is numeric, NULL last",
			q:    &ir.Query{Table: "people", GroupBy: []string{"age"}, OrderBy: []ir.Order{{Column: "age", Desc: true}}},
			want: []ir.Cell{
				{Group: fixture.Group("100"), Count: 1, InDomain: true},
				{Group: fixture.Group("99"), Count: 2, InDomain: true},
				{Group: fixture.Group("41"), Count: 2, InDomain: true},
				{Group: fixture.Group("30"), Count: 4, InDomain: true},
				{Group: fixture.Group("25"), Count: 3, InDomain: true},
				{Group: fixture.Group("NULL"), Count: 1, InDomain: true},
			},
		},
		{
			name: "order by the second group column, ties keep group order",
			q: &ir.Query{Table: "people", GroupBy: []string{"sex", "suburb"}, Where: &ir.In{Column: "sex", Values: []ir.Literal{fixture.TextLit("F"), fixture.TextLit("M")}},
				OrderBy: []ir.Order{{Column: "suburb"}}},
			want: []ir.Cell{
				{Group: fixture.Group("M", "NULL"), Count: 1, InDomain: true},
				{Group: fixture.Group("M", "Central"), Count: 1, InDomain: true},
				{Group: fixture.Group("F", "East"), Count: 2, InDomain: true},
				{Group: fixture.Group("M", "East"), Count: 1, InDomain: true},
				{Group: fixture.Group("F", "North"), Count: 2, InDomain: true},
				{Group: fixture.Group("M", "North"), Count: 1, InDomain: true},
				{Group: fixture.Group("F", "South"), Count: 1, InDomain: true},
				{Group: fixture.Group("F", "West"), Count: 1, InDomain: true},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Run(context.Background(), people, tc.q, tc.needs, fixture.Secret)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Cells, tc.want) {
				t.Errorf("cells:\n got %+v\nwant %+v", res.Cells, tc.want)
			}
			if wantComplete := len(tc.q.GroupBy) == 0; res.DomainComplete != wantComplete {
				t.Errorf("DomainComplete = %v, want %v", res.DomainComplete, wantComplete)
			}
		})
	}
}

func TestStoreDomains(t *testing.T) {
	s, _ := openTestStore(t, plan.StoreOptions{})
	people := fixture.People()
	people.Columns["sex"].Domain = &ir.Domain{Categories: []string{"M", "F", "U"}}
	people.Columns["age"].Domain = &ir.Domain{IsRange: true, Min: 24, Max: 26}
	cases := []struct {
		name  string
		q     *ir.Query
		needs ir.Needs
		want  []ir.Cell
	}{
		{
			name:  "categories in listed order, zero cell included, X and NULL left out",
			q:     &ir.Query{Table: "people", GroupBy: []string{"sex"}},
			needs: ir.Needs{Key: true},
			want: []ir.Cell{
				{Group: fixture.Group("M"), Count: 4, Units: 4, Key: fixture.KeyOf(2, 4, 5, 9), InDomain: true},
				{Group: fixture.Group("F"), Count: 6, Units: 4, Key: fixture.KeyOf(1, 3, 6, 8), InDomain: true},
				{Group: fixture.Group("U"), InDomain: true},
			},
		},
		{
			name: "count distinct over the domain",
			q:    &ir.Query{Table: "people", Agg: ir.CountDistinct, GroupBy: []string{"sex"}},
			want: []ir.Cell{
				{Group: fixture.Group("M"), Count: 4, InDomain: true},
				{Group: fixture.Group("F"), Count: 4, InDomain: true},
				{Group: fixture.Group("U"), InDomain: true},
			},
		},
		{
			name:  "a product of categories and a range, last column fastest",
			q:     &ir.Query{Table: "people", GroupBy: []string{"sex", "age"}},
			needs: ir.Needs{Units: true},
			want: []ir.Cell{
				{Group: fixture.Group("M", "24"), InDomain: true},
				{Group: fixture.Group("M", "25"), Count: 1, Units: 1, InDomain: true},
				{Group: fixture.Group("M", "26"), InDomain: true},
				{Group: fixture.Group("F", "24"), InDomain: true},
				{Group: fixture.Group("F", "25"), Count: 2, Units: 1, InDomain: true},
				{Group: fixture.Group("F", "26"), InDomain: true},
				{Group: fixture.Group("U", "24"), InDomain: true},
				{Group: fixture.Group("U", "25"), InDomain: true},
				{Group: fixture.Group("U", "26"), InDomain: true},
			},
		},
		{
			name: "order by is a stable sort of the domain order",
			q: &ir.Query{Table: "people", GroupBy: []string{"age", "sex"}, OrderBy: []ir.Order{{Column: "sex", Desc: true}},
				Where: &ir.Compare{Column: "income", Op: "<", Value: fixture.IntLit(300)}},
			want: []ir.Cell{
				{Group: fixture.Group("24", "U"), InDomain: true},
				{Group: fixture.Group("25", "U"), InDomain: true},
				{Group: fixture.Group("26", "U"), InDomain: true},
				{Group: fixture.Group("24", "M"), InDomain: true},
				{Group: fixture.Group("25", "M"), InDomain: true},
				{Group: fixture.Group("26", "M"), InDomain: true},
				{Group: fixture.Group("24", "F"), InDomain: true},
				{Group: fixture.Group("25", "F"), Count: 2, InDomain: true},
				{Group: fixture.Group("26", "F"), InDomain: true},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Run(context.Background(), people, tc.q, tc.needs, fixture.Secret)
			if err != nil {
				t.Fatal(err)
			}
			if !res.DomainComplete {
				t.Error("DomainComplete is false")
			}
			if !reflect.DeepEqual(res.Cells, tc.want) {
				t.Errorf("cells:\n got %+v\nwant %+v", res.Cells, tc.want)
			}
		})
	}

	t.Run("a partial domain marks the cells outside it", func(t *testing.T) {
		q := &ir.Query{Table: "people", GroupBy: []string{"sex", "suburb"}, Where: &ir.Compare{Column: "suburb", Op: "=", Value: fixture.TextLit("North")}}
		res, err := s.Run(context.Background(), people, q, ir.Needs{}, fixture.Secret)
		if err != nil {
			t.Fatal(err)
		}
		want := []ir.Cell{
			{Group: fixture.Group("F", "North"), Count: 2, InDomain: true},
			{Group: fixture.Group("M", "North"), Count: 1, InDomain: true},
			{Group: fixture.Group("X", "North"), Count: 2, InDomain: false},
		}
		if res.DomainComplete || !reflect.DeepEqual(res.Cells, want) {
			t.Errorf("complete %v, cells %+v; want false, %+v", res.DomainComplete, res.Cells, want)
		}
	})
}

func TestStoreMaxGroups(t *testing.T) {
	s, _ := openTestStore(t, plan.StoreOptions{})
	people := fixture.People()
	people.Policy.MaxGroups = 3

	// Three groups fit; four do not.
	three := &ir.Query{Table: "people", GroupBy: []string{"sex"}, Where: &ir.IsNull{Column: "sex", Negate: true}}
	if res, err := s.Run(context.Background(), people, three, ir.Needs{}, nil); err != nil || len(res.Cells) != 3 {
		t.Fatalf("three groups: %v, %v", res, err)
	}
	four := &ir.Query{Table: "people", GroupBy: []string{"sex"}}
	_, err := s.Run(context.Background(), people, four, ir.Needs{}, nil)
	var pe *pgerror.Error
	if !errors.As(err, &pe) || pe.Code != pgerror.ProgramLimitExceeded || !strings.Contains(pe.Message, "3") {
		t.Errorf("four groups: got %v, want %s naming the limit 3", err, pgerror.ProgramLimitExceeded)
	}

	// A domain product over the limit is refused before any data is read.
	people.Columns["age"].Domain = &ir.Domain{IsRange: true, Min: 0, Max: 3}
	_, err = s.Run(context.Background(), people, &ir.Query{Table: "people", GroupBy: []string{"age"}}, ir.Needs{}, nil)
	if !errors.As(err, &pe) || pe.Code != pgerror.ProgramLimitExceeded || !strings.Contains(pe.Message, "3") {
		t.Errorf("domain of 4 cells: got %v, want %s naming the limit 3", err, pgerror.ProgramLimitExceeded)
	}
}

func TestStoreTableSizeAndConditions(t *testing.T) {
	s, _ := openTestStore(t, plan.StoreOptions{})
	q := &ir.Query{Table: "people", Where: &ir.And{
		Left:  &ir.In{Column: "sex", Values: []ir.Literal{fixture.TextLit("M"), fixture.TextLit("F")}},
		Right: &ir.Compare{Column: "age", Op: ">", Value: fixture.IntLit(29)},
	}}
	res, err := s.Run(context.Background(), fixture.People(), q, ir.Needs{TableSize: true, Conditions: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantCond := []string{"age > 29", "sex IN ('F', 'M')"}
	if res.TableSize != 13 || res.Cells[0].Count != 6 || !slices.Equal(res.Conditions, wantCond) {
		t.Errorf("size %d, count %d, conditions %q; want 13, 6, %q", res.TableSize, res.Cells[0].Count, res.Conditions, wantCond)
	}
	res, err = s.Run(context.Background(), fixture.People(), q, ir.Needs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.TableSize != 0 || res.Conditions != nil {
		t.Errorf("not asked for, got size %d and conditions %q", res.TableSize, res.Conditions)
	}
}

func TestStoreRefusals(t *testing.T) {
	s, _ := openTestStore(t, plan.StoreOptions{})
	people := fixture.People()
	var pe *pgerror.Error
	if _, err := s.Run(context.Background(), people, &ir.Query{Table: "people"}, ir.Needs{Key: true}, nil); !errors.As(err, &pe) {
		t.Errorf("a key without a secret: got %v, want a *pgerror.Error", err)
	}
	bad := &ir.Query{Table: "people", Where: &ir.Compare{Column: "salary", Op: "=", Value: fixture.IntLit(1)}}
	if _, err := s.Run(context.Background(), people, bad, ir.Needs{}, nil); !errors.As(err, &pe) || pe.Code != pgerror.InternalError {
		t.Errorf("a column outside the catalog: got %v, want %s", err, pgerror.InternalError)
	}
	missing := &ir.Table{Name: "nope", PrivacyUnit: "id", Columns: people.Columns}
	_, err := s.Run(context.Background(), missing, &ir.Query{Table: "nope"}, ir.Needs{}, nil)
	if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("a table missing from the file: got %v, want a wrapped SQLite error naming it", err)
	}
}

func fileSHA256(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestStoreIsReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "people.db")
	fixture.WritePeople(t, path, fixture.PeopleRows)
	before := fileSHA256(t, path)

	s, err := OpenStore(path, plan.StoreOptions{MaxOpenConns: 2})
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
		if _, err := s.db().ExecContext(ctx, stmt); err == nil {
			t.Errorf("%s: succeeded through the store", stmt)
		}
	}
	// Reads still work, on every pooled connection.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := s.Run(ctx, fixture.People(), &ir.Query{Table: "people"}, ir.Needs{Key: true, TableSize: true}, fixture.Secret); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if after := fileSHA256(t, path); after != before {
		t.Error("the database file changed")
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the store left files beside the database: %v", entries)
	}
}

func TestOpenStoreRefusesAMissingOrBadFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	if _, err := OpenStore(missing, plan.StoreOptions{}); err == nil || !strings.Contains(err.Error(), "missing.db") {
		t.Errorf("missing file: got %v, want an error naming it", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenStore created %s", missing)
	}
	if _, err := OpenStore(dir, plan.StoreOptions{}); err == nil {
		t.Error("a directory opened as a database")
	}
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(garbage, plan.StoreOptions{}); err == nil {
		t.Error("a file that is not SQLite opened")
	}
	// A name with URI metacharacters is a path, not a query string.
	plain := filepath.Join(dir, "plain.db")
	fixture.WritePeople(t, plain, fixture.PeopleRows)
	odd := filepath.Join(dir, "odd?mode=rwc#x%20.db")
	if err := os.Rename(plain, odd); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(odd, plan.StoreOptions{})
	if err != nil {
		t.Fatalf("path with ?, # and %%: %v", err)
	}
	defer s.Close()
	if res, err := s.Run(context.Background(), fixture.People(), &ir.Query{Table: "people"}, ir.Needs{}, nil); err != nil || res.Cells[0].Count != 13 {
		t.Errorf("reading through an odd path: %v, %v", res, err)
	}
}

func TestStoreCancellation(t *testing.T) {
	// 200,000 rows keyed per unit take SQLite far longer than 5 ms, so the
	// deadline fires mid-query and must interrupt it.
	s, _ := openTestStore(t, plan.StoreOptions{QueryTimeout: 5 * time.Millisecond}, `
		INSERT INTO people (id, age, sex, suburb, income)
		WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000)
		SELECT x, x % 90, CASE x % 2 WHEN 0 THEN 'F' ELSE 'M' END, 'S' || (x % 300), x * 7 FROM c`)
	people := fixture.People()
	q := &ir.Query{Table: "people", GroupBy: []string{"suburb"}, Where: &ir.Like{Column: "suburb", Pattern: "%1%", Negate: true}}

	start := time.Now()
	_, err := s.Run(context.Background(), people, q, ir.Needs{Key: true, TableSize: true}, fixture.Secret)
	elapsed := time.Since(start)
	var pe *pgerror.Error
	if !errors.As(err, &pe) || pe.Code != pgerror.QueryCanceled || !strings.Contains(pe.Message, "timeout") {
		t.Fatalf("got %v, want %s for the statement timeout", err, pgerror.QueryCanceled)
	}
	if elapsed > 2*time.Second {
		t.Errorf("the query ran %v past a 5ms deadline: it was not interrupted", elapsed)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Run(ctx, people, &ir.Query{Table: "people"}, ir.Needs{}, nil)
	if !errors.As(err, &pe) || pe.Code != pgerror.QueryCanceled || !strings.Contains(pe.Message, "user request") {
		t.Errorf("cancelled context: got %v, want %s for a user request", err, pgerror.QueryCanceled)
	}
}

func TestStoreConcurrentRuns(t *testing.T) {
	s, _ := openTestStore(t, plan.StoreOptions{MaxOpenConns: 3})
	people := fixture.People()
	q := &ir.Query{Table: "people", GroupBy: []string{"sex"}}
	want, err := s.Run(context.Background(), people, q, ir.Needs{Key: true}, fixture.Secret)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for range 20 {
				needs := ir.Needs{Key: true, TableSize: g%2 == 0}
				got, err := s.Run(context.Background(), people, q, needs, fixture.Secret)
				if err != nil {
					t.Error(err)
					return
				}
				if !reflect.DeepEqual(got.Cells, want.Cells) {
					t.Errorf("concurrent run differs: %+v", got.Cells)
					return
				}
			}
		})
	}
	wg.Wait()
}

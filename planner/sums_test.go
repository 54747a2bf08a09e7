package planner

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"countwall/internal/pgtest"
	"countwall/ir"
	"countwall/pgerror"
	"countwall/planner/plan"
)

func TestParseSums(t *testing.T) {
	tests := []struct {
		sql     string
		want    []ir.Aggregate
		groupBy []string
	}{
		{"SELECT COUNT(*) FROM people", nil, nil},
		{"SELECT SUM(income) FROM people", []ir.Aggregate{{Func: ir.FuncSum, Column: "income", Alias: "sum"}}, nil},
		{"SELECT COUNT(*), sex, AVG(score) AS mean FROM people GROUP BY sex",
			[]ir.Aggregate{{Func: ir.FuncCount, Alias: "count"}, {Func: ir.FuncAvg, Column: "score", Alias: "mean", Position: 2}}, []string{"sex"}},
		{"SELECT sex, AVG(income), SUM(income) AS total, COUNT(*) AS n FROM people WHERE age > 30 GROUP BY sex",
			[]ir.Aggregate{{Func: ir.FuncAvg, Column: "income", Alias: "avg", Position: 1}, {Func: ir.FuncSum, Column: "income", Alias: "total", Position: 2},
				{Func: ir.FuncCount, Alias: "n", Position: 3}}, []string{"sex"}},
	}
	for _, tc := range tests {
		st, err := Parse(tc.sql, nil, testCatalog(nil))
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		q := st.(*ir.Query)
		if !reflect.DeepEqual(q.Aggregates, tc.want) || !slices.Equal(q.GroupBy, tc.groupBy) {
			t.Errorf("%s: aggregates %+v group by %v, want %+v %v", tc.sql, q.Aggregates, q.GroupBy, tc.want, tc.groupBy)
		}
	}
	q, _ := Parse("SELECT AVG(income), SUM(score), SUM(income) FROM people", nil, testCatalog(nil))
	if got := q.(*ir.Query).SumColumns(); !slices.Equal(got, []string{"income", "score"}) {
		t.Errorf("sum columns = %v", got)
	}
}

func TestSumRefusals(t *testing.T) {
	tests := []struct {
		sql  string
		code pgerror.Code
	}{
		{"SELECT SUM(sex) FROM people", pgerror.UndefinedFunction},
		{"SELECT SUM(*) FROM people", pgerror.SyntaxError},
		{"SELECT SUM(DISTINCT income) FROM people", pgerror.FeatureNotSupported},
		{"SELECT SUM(income + 1) FROM people", pgerror.FeatureNotSupported},
		{"SELECT SUM(income, age) FROM people", pgerror.UndefinedFunction},
		{"SELECT SUM(id) FROM people", pgerror.InsufficientPrivilege},
		{"SELECT SUM(nope) FROM people", pgerror.UndefinedColumn},
		{"SELECT COUNT(*) > 3, SUM(income) FROM people", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*), COUNT(DISTINCT id), SUM(income) FROM people", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*), COUNT(*) FROM people", pgerror.FeatureNotSupported},
		{"SELECT MIN(income), SUM(income) FROM people", pgerror.FeatureNotSupported},
	}
	for _, tc := range tests {
		_, err := Parse(tc.sql, nil, testCatalog(nil))
		if got := pgerror.SQLState(err); got != tc.code {
			t.Errorf("%s: %v (%s), want %s", tc.sql, err, got, tc.code)
		}
	}
}

// sumTableRows are the rows of the backends' sums test: units with several
// rows, NULL groups and values, and values that are not numbers of their
// column's type (counted as NULL).
func sumTableRows() [][]any {
	var rows [][]any
	for i := range 300 {
		unit := any(int64(i / 3))
		if i%50 == 0 {
			unit = nil
		}
		grp := any([]string{"x", "y", "z"}[i%3])
		if i%17 == 0 {
			grp = nil
		}
		v := any(int64((i*7919)%2001 - 1000))
		switch {
		case i%11 == 0:
			v = nil
		case i%29 == 0:
			v = "not a number"
		case i%31 == 0:
			v = 2.5 // a real in an integer column
		}
		r := any(float64((i*13)%801-400) / 4)
		if i%13 == 0 {
			r = nil
		}
		rows = append(rows, []any{unit, grp, v, r})
	}
	return rows
}

// sumReference computes a query's cells from the rows as the backends must,
// units and contributor keys under secret included.
func sumReference(rows [][]any, grouped bool, b ir.ValueBounds, topK int, secret []byte) map[string]ir.Cell {
	cells := map[string]ir.Cell{}
	perUnit := map[string]map[int64][]float64{}
	for _, r := range rows {
		key := "all"
		if grouped {
			key = fmt.Sprint(r[1])
		}
		c, ok := cells[key]
		if !ok {
			c = ir.Cell{Sums: []ir.SumValue{{Int: new(big.Int)}, {}}}
		}
		c.Count++
		var clamped [2]float64
		if v, ok := r[2].(int64); ok {
			c.Sums[0].N++
			c.Sums[0].Int.Add(c.Sums[0].Int, big.NewInt(v))
			clamped[0] = b.Clamp(float64(v))
			c.Sums[0].Clamped += clamped[0]
		}
		if v, ok := r[3].(float64); ok {
			c.Sums[1].N++
			c.Sums[1].Float += v
			clamped[1] = b.Clamp(v)
			c.Sums[1].Clamped += clamped[1]
		}
		if u, ok := r[0].(int64); ok {
			if perUnit[key] == nil {
				perUnit[key] = map[int64][]float64{}
			}
			t := perUnit[key][u]
			if t == nil {
				t = make([]float64, 2)
			}
			t[0], t[1] = t[0]+clamped[0], t[1]+clamped[1]
			perUnit[key][u] = t
		}
		cells[key] = c
	}
	for key, units := range perUnit {
		c := cells[key]
		for u := range units {
			c.Units++
			c.Key += plan.RecordKey(secret, u)
		}
		cells[key] = c
		for k := range 2 {
			var contr []float64
			for _, t := range units {
				contr = append(contr, t[k])
			}
			cells[key].Sums[k].Contributions = plan.TopContributions(contr, topK)
		}
	}
	return cells
}

// sumsTable is the catalog entry of the sums test's table t.
func sumsTable(bounds *ir.ValueBounds) *ir.Table {
	return &ir.Table{Name: "t", PrivacyUnit: "unit", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{
		"unit": {Name: "unit", Type: ir.TypeInt}, "grp": {Name: "grp", Type: ir.TypeText},
		"v": {Name: "v", Type: ir.TypeInt, Bounds: bounds}, "r": {Name: "r", Type: ir.TypeReal, Bounds: bounds},
	}}
}

func TestSumsBackendsAgree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sums.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (unit INTEGER, grp TEXT, v INTEGER, r REAL)"); err != nil {
		t.Fatal(err)
	}
	rows := sumTableRows()
	for _, r := range rows {
		if _, err := db.Exec("INSERT INTO t VALUES (?, ?, ?, ?)", r...); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	for _, opts := range []plan.StoreOptions{{NoSnapshot: true}, {}} {
		s, err := OpenStore(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		checkSumsBackend(t, s, rows, map[bool]string{true: ir.PathSQLite, false: ir.PathSnapshot}[opts.NoSnapshot])
	}
}

// TestPostgresSumsAgree is TestSumsBackendsAgree against a PostgreSQL
// store; the values that are not numbers are left out (PostgreSQL's
// columns are typed).
func TestPostgresSumsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	url := pgtest.Server(t).NewDatabase(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t (unit bigint, grp text, v bigint, r double precision)"); err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	for _, r := range sumTableRows() {
		if _, ok := r[2].(int64); !ok {
			r[2] = nil
		}
		rows = append(rows, r)
		if _, err := db.Exec("INSERT INTO t VALUES ($1, $2, $3, $4)", r...); err != nil {
			t.Fatal(err)
		}
	}
	s, err := OpenStore(url, plan.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkSumsBackend(t, s, rows, ir.PathPostgres)
}

// checkSumsBackend runs the sums test's queries under each needs and
// compares the cells with sumReference's.
func checkSumsBackend(t *testing.T, s *Store, rows [][]any, path string) {
	t.Helper()
	bounds := ir.ValueBounds{Min: -200, Max: 300}
	table := sumsTable(&bounds)
	aggs := []ir.Aggregate{{Func: ir.FuncSum, Column: "v", Alias: "sum"}, {Func: ir.FuncAvg, Column: "r", Alias: "avg", Position: 1}}
	queries := map[bool]*ir.Query{
		false: {Table: "t", Aggregates: aggs},
		true:  {Table: "t", GroupBy: []string{"grp"}, Aggregates: []ir.Aggregate{aggs[0], {Func: ir.FuncAvg, Column: "r", Alias: "avg", Position: 2}}},
	}
	ctx := context.Background()
	secret := []byte("the sums test's secret")
	for _, needs := range []ir.Needs{{}, {Clamp: true}, {Contributions: true, TopContributions: 2}, {Contributions: true, Oblivious: true}, {Oblivious: true},
		{Units: true, Key: true}, {Key: true, Contributions: true, TopContributions: 3}} {
		for grouped, q := range queries {
			res, err := s.Run(ctx, table, q, needs, secret)
			if err != nil {
				t.Fatalf("%s %+v: %v", q.GroupBy, needs, err)
			}
			if res.Path != path {
				t.Errorf("path %s, want %s", res.Path, path)
			}
			want := sumReference(rows, grouped, bounds, needs.TopContributions, secret)
			if len(res.Cells) != len(want) {
				t.Fatalf("%s %+v: %d cells, want %d", res.Path, needs, len(res.Cells), len(want))
			}
			for _, c := range res.Cells {
				checkSumCell(t, res.Path, needs, grouped, c, want)
			}
		}
	}
}

// checkSumCell compares one cell with the reference's, keeping of the
// reference what needs asked for.
func checkSumCell(t *testing.T, path string, needs ir.Needs, grouped bool, c ir.Cell, want map[string]ir.Cell) {
	t.Helper()
	key := "all"
	if grouped {
		key = fmt.Sprint(c.Group[0].Text)
		if c.Group[0].Null {
			key = "<nil>"
		}
	}
	w := want[key]
	w.Sums = slices.Clone(w.Sums)
	if !(needs.Clamp || needs.Contributions) {
		w.Sums[0].Clamped, w.Sums[1].Clamped = 0, 0
	}
	if !needs.Contributions {
		w.Sums[0].Contributions, w.Sums[1].Contributions = nil, nil
	}
	if !needs.Units && !needs.Key {
		w.Units, w.Key = 0, 0
	}
	for k := range 2 { // ties among equal totals may come in any order
		slices.Sort(c.Sums[k].Contributions)
		w.Sums[k].Contributions = slices.Clone(w.Sums[k].Contributions)
		slices.Sort(w.Sums[k].Contributions)
	}
	if c.Count != w.Count || c.Units != w.Units || c.Key != w.Key || !reflect.DeepEqual(c.Sums, w.Sums) {
		t.Errorf("%s %+v cell %s:\n got %d %d %d %+v\nwant %d %d %d %+v", path, needs, key, c.Count, c.Units, c.Key, c.Sums, w.Count, w.Units, w.Key, w.Sums)
	}
}

package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"countwall/internal/pgtest"
	"countwall/pgtypes"
)

// SUM and AVG under exact against PostgreSQL: the same rows in a SQLite file
// (answered by the snapshot) and in PostgreSQL tables (answered by the
// PostgreSQL backend), each numeric type the catalog maps, NULLs, groups of
// NULLs only, WHERE matching nothing, integer sums past bigint, and mixed
// select lists. PostgreSQL's own answer over the columns as the catalog
// shows them (bigint, double precision) is the reference: every value's
// text and every column's type must be PostgreSQL's.

// sumColumnsUnderTest are the summed columns: their SQLite and PostgreSQL
// declarations, and how the reference reads each (the catalog's type).
var sumColumnsUnderTest = []struct{ name, sqlite, pg, ref string }{
	{"i2", "SMALLINT", "smallint", "i2::int8"},
	{"i4", "INTEGER", "integer", "i4::int8"},
	{"i8", "BIGINT", "bigint", "i8::int8"},
	{"r4", "REAL", "real", "r4::float8"},
	{"r8", "DOUBLE PRECISION", "double precision", "r8::float8"},
	{"num", "NUMERIC", "numeric", "num::float8"},
	{"huge", "BIGINT", "bigint", "huge::int8"},
	{"nulls", "INTEGER", "integer", "nulls::int8"},
}

// sumRow is one row's values: nil is NULL. Reals are multiples of 1/8, which
// every type holds exactly and every order sums to the same double.
func sumRow(i int) []any {
	grp := any([]string{"a", "b", "c"}[i%3])
	if i%10 == 0 {
		grp = nil
	}
	var vals []any
	for k := range sumColumnsUnderTest {
		if (i+k)%7 == 0 {
			vals = append(vals, nil)
			continue
		}
		switch sumColumnsUnderTest[k].name {
		case "i2":
			vals = append(vals, int64((i*37)%60000-30000))
		case "i4":
			vals = append(vals, int64((i*7919)%4000000)-2000000)
		case "i8":
			vals = append(vals, int64(i)*1_000_003-40_000_000)
		case "r4", "r8", "num":
			vals = append(vals, float64((i*13)%4001-2000)/8)
		case "huge":
			vals = append(vals, int64(math.MaxInt64-int64(i)))
		case "nulls":
			vals = append(vals, nil)
		}
	}
	// Group c's "nulls" stays NULL; group b's i8 is NULL everywhere: a group
	// of NULLs only.
	if grp == "b" {
		vals[2] = nil
	}
	return append([]any{int64(i), grp}, vals...)
}

func sumStatements() []string {
	var out []string
	wheres := []string{"", " WHERE i4 > 0", " WHERE i4 > 100000000", " WHERE grp = 'a' OR grp IS NULL"}
	for _, c := range sumColumnsUnderTest {
		for _, w := range wheres {
			out = append(out,
				"SELECT SUM("+c.name+") FROM pay"+w,
				"SELECT AVG("+c.name+") FROM pay"+w,
				"SELECT grp, SUM("+c.name+"), AVG("+c.name+"), COUNT(*) FROM pay"+w+" GROUP BY grp",
			)
		}
	}
	return append(out,
		"SELECT COUNT(*), SUM(i4) AS total, grp, AVG(r8) AS mean FROM pay GROUP BY grp",
		"SELECT AVG(i2), COUNT(*) AS n, SUM(i8) FROM pay",
		"SELECT SUM(huge), AVG(huge), COUNT(*) FROM pay WHERE grp = 'a'",
		"SELECT AVG(i8), SUM(i8), grp, COUNT(*) FROM pay WHERE i2 < 0 GROUP BY grp",
		"SELECT COUNT(DISTINCT id), SUM(num) FROM pay",
	)
}

// referenceSQL is a statement as PostgreSQL reads the columns the catalog
// shows: each summed column cast to bigint or double precision. A GROUP BY
// leaves out the NULL group, which lies outside grp's declared domain.
func referenceSQL(s string) string {
	if before, group, ok := strings.Cut(s, " GROUP BY "); ok {
		if strings.Contains(before, " WHERE ") {
			before = strings.Replace(before, " WHERE ", " WHERE grp IS NOT NULL AND (", 1) + ")"
		} else {
			before += " WHERE grp IS NOT NULL"
		}
		s = before + " GROUP BY " + group
	}
	for _, c := range sumColumnsUnderTest {
		for _, f := range []string{"SUM(", "AVG("} {
			s = strings.ReplaceAll(s, f+c.name+")", f+c.ref+")")
		}
	}
	return s
}

func TestSumAvgExactAgainstPostgres(t *testing.T) {
	srv := pgtest.Server(t)
	ctx := context.Background()
	dir := t.TempDir()
	const n = 400
	path := filepath.Join(dir, "protected.db")
	url := srv.NewDatabase(t)
	pg, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	loadSumTables(t, ctx, path, pg, n)

	for _, store := range []struct{ name, database string }{{"sqlite", path}, {"postgres", url}} {
		t.Run(store.name, func(t *testing.T) {
			body := fmt.Sprintf("database: %s\nstate: %s\nmechanism: {name: exact}\ntables:\n  pay:\n    privacy_unit: id\n    domains: {grp: [a, b, c]}\n",
				store.database, filepath.Join(t.TempDir(), "state.db"))
			e, err := Open(ctx, loadConfigText(t, filepath.Join(t.TempDir(), "countwall.yaml"), body), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			for _, stmt := range sumStatements() {
				res, err := e.Query(ctx, "alice", stmt)
				if err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
				mine, types := resultText(res, strings.Contains(stmt, "GROUP BY"))
				theirs, theirTypes := postgresText(ctx, t, pg, referenceSQL(stmt))
				if !slices.Equal(types, theirTypes) {
					t.Errorf("%s: column types %v, PostgreSQL's %v", stmt, types, theirTypes)
				}
				if !slices.Equal(mine, theirs) {
					t.Errorf("%s:\n got %q\nwant %q", stmt, mine, theirs)
				}
			}
		})
	}
}

// loadSumTables writes n rows into the SQLite file and PostgreSQL.
func loadSumTables(t *testing.T, ctx context.Context, path string, pg *pgx.Conn, n int) {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	liteCols, pgCols, names := []string{"id INTEGER", "grp TEXT"}, []string{"id bigint", "grp text"}, []string{"id", "grp"}
	for _, c := range sumColumnsUnderTest {
		liteCols, pgCols, names = append(liteCols, c.name+" "+c.sqlite), append(pgCols, c.name+" "+c.pg), append(names, c.name)
	}
	if _, err := db.Exec("CREATE TABLE pay (" + strings.Join(liteCols, ", ") + ")"); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Exec(ctx, "CREATE TABLE pay ("+strings.Join(pgCols, ", ")+")"); err != nil {
		t.Fatal(err)
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")
	var rows [][]any
	for i := 1; i <= n; i++ {
		r := sumRow(i)
		if _, err := db.Exec("INSERT INTO pay VALUES ("+marks+")", r...); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if _, err := pg.CopyFrom(ctx, pgx.Identifier{"pay"}, names, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
}

// resultText is an answer's rows as PostgreSQL's text output, sorted, and
// its columns' type OIDs. grouped leaves out the cells of the declared
// domain that no row reaches (COUNT 0), which PostgreSQL does not list.
func resultText(res *Result, grouped bool) ([]string, []uint32) {
	var types []uint32
	for _, c := range res.Columns {
		types = append(types, map[ColumnType]uint32{ColumnInt8: 20, ColumnFloat8: 701, ColumnNumeric: 1700, ColumnText: 25}[c.Type])
	}
	var rows []string
	for _, row := range res.Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			switch {
			case v.Null:
				vals[i] = "NULL"
			case res.Columns[i].Type == ColumnInt8:
				vals[i] = strconv.FormatInt(v.Int, 10)
			case res.Columns[i].Type == ColumnFloat8:
				vals[i] = pgtypes.FormatFloat8(v.Float)
			default:
				vals[i] = v.Text
			}
		}
		if grouped && slices.ContainsFunc(res.Columns, func(c Column) bool { return c.Type == ColumnInt8 }) &&
			row[slices.IndexFunc(res.Columns, func(c Column) bool { return c.Type == ColumnInt8 })].Int == 0 {
			continue
		}
		rows = append(rows, strings.Join(vals, "|"))
	}
	slices.Sort(rows)
	return rows, types
}

// postgresText is PostgreSQL's answer in its text format, sorted, and its
// columns' type OIDs.
func postgresText(ctx context.Context, t *testing.T, pg *pgx.Conn, stmt string) ([]string, []uint32) {
	t.Helper()
	rr := pg.PgConn().ExecParams(ctx, stmt, nil, nil, nil, nil)
	var rows []string
	for rr.NextRow() {
		vals := make([]string, len(rr.Values()))
		for i, v := range rr.Values() {
			if v == nil {
				vals[i] = "NULL"
			} else {
				vals[i] = string(v)
			}
		}
		rows = append(rows, strings.Join(vals, "|"))
	}
	var types []uint32
	for _, f := range rr.FieldDescriptions() {
		types = append(types, f.DataTypeOID)
	}
	if _, err := rr.Close(); err != nil {
		t.Fatalf("PostgreSQL: %s: %v", stmt, err)
	}
	slices.Sort(rows)
	return rows, types
}

// Package pgcopy copies a table of a SQLite database into PostgreSQL, so that
// the same data can be protected from either store (the differential tests,
// the benchmarks, and a user moving to a PostgreSQL store).
package pgcopy

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Table copies table from the SQLite file at sqlitePath into the PostgreSQL
// database at url, creating it there (it must not exist) with the column
// types SQLite's declared affinities map to: bigint, double precision, text.
// It returns the number of rows copied. The SQLite file is opened read-only.
func Table(ctx context.Context, sqlitePath, table, url string) (int64, error) {
	src, err := sql.Open("sqlite", "file:"+sqlitePath+"?mode=ro")
	if err != nil {
		return 0, fmt.Errorf("pgcopy: opening %s: %w", sqlitePath, err)
	}
	defer src.Close()
	names, types, err := columns(ctx, src, table)
	if err != nil {
		return 0, err
	}
	dst, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, fmt.Errorf("pgcopy: connecting to PostgreSQL: %w", err)
	}
	defer dst.Close(ctx)

	defs := make([]string, len(names))
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = pgx.Identifier{n}.Sanitize()
		defs[i] = quoted[i] + " " + types[i]
	}
	if _, err := dst.Exec(ctx, "CREATE TABLE "+pgx.Identifier{table}.Sanitize()+" ("+strings.Join(defs, ", ")+")"); err != nil {
		return 0, fmt.Errorf("pgcopy: creating table %q in PostgreSQL: %w", table, err)
	}
	rows, err := src.QueryContext(ctx, "SELECT "+strings.Join(quoted, ", ")+" FROM "+pgx.Identifier{table}.Sanitize())
	if err != nil {
		return 0, fmt.Errorf("pgcopy: reading table %q: %w", table, err)
	}
	defer rows.Close()
	n, err := dst.CopyFrom(ctx, pgx.Identifier{table}, names, &source{rows: rows, types: types})
	if err != nil {
		return n, fmt.Errorf("pgcopy: copying table %q: %w", table, err)
	}
	return n, nil
}

// columns reads a SQLite table's columns and the PostgreSQL type of each.
func columns(ctx context.Context, db *sql.DB, table string) (names, types []string, err error) {
	rows, err := db.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, nil, fmt.Errorf("pgcopy: reading the columns of %q: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, decl string
		if err := rows.Scan(&name, &decl); err != nil {
			return nil, nil, fmt.Errorf("pgcopy: reading the columns of %q: %w", table, err)
		}
		names = append(names, name)
		types = append(types, pgType(decl))
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("pgcopy: reading the columns of %q: %w", table, err)
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("pgcopy: table %q is not in the SQLite database", table)
	}
	return names, types, nil
}

// pgType follows SQLite's affinity rules (https://sqlite.org/datatype3.html,
// 3.1), as the planner reads a SQLite table's columns.
func pgType(decl string) string {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "INT"):
		return "bigint"
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"),
		strings.Contains(d, "BLOB"), d == "":
		return "text"
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"),
		strings.Contains(d, "NUM"), strings.Contains(d, "DEC"):
		return "double precision"
	case strings.Contains(d, "BOOL"):
		return "bigint"
	}
	return "text"
}

// source feeds SQLite rows to COPY, each value converted to its column's
// type (SQLite lets a column hold values of any type).
type source struct {
	rows  *sql.Rows
	types []string
	vals  []any
	err   error
}

func (s *source) Next() bool {
	if !s.rows.Next() {
		return false
	}
	raw := make([]any, len(s.types))
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := s.rows.Scan(ptrs...); err != nil {
		s.err = err
		return false
	}
	s.vals = make([]any, len(raw))
	for i, v := range raw {
		if s.vals[i], s.err = convert(v, s.types[i]); s.err != nil {
			return false
		}
	}
	return true
}

func (s *source) Values() ([]any, error) { return s.vals, s.err }

func (s *source) Err() error {
	if s.err != nil {
		return s.err
	}
	return s.rows.Err()
}

// convert turns one SQLite value into a value of the PostgreSQL type.
func convert(v any, typ string) (any, error) {
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case int64:
		switch typ {
		case "text":
			return strconv.FormatInt(v, 10), nil
		case "double precision":
			return float64(v), nil
		}
		return v, nil
	case float64:
		switch typ {
		case "text":
			return strconv.FormatFloat(v, 'g', -1, 64), nil
		case "bigint":
			if v == float64(int64(v)) {
				return int64(v), nil
			}
			return nil, fmt.Errorf("pgcopy: a real value in an integer column")
		}
		return v, nil
	case string:
		switch typ {
		case "bigint":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("pgcopy: a text value in an integer column")
			}
			return n, nil
		case "double precision":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("pgcopy: a text value in a real column")
			}
			return f, nil
		}
		return v, nil
	}
	return fmt.Sprint(v), nil
}

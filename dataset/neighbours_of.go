package dataset

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"countwall/pglex"
)

// Neighbours of a real table, for `countwall audit --config`: the protected
// file is only read (attached read-only), and each neighbour is written to a
// new file beside the audit's other scratch files.

// NeighbourKind is how the audited person differs between the two worlds.
type NeighbourKind string

const (
	// RemovedUnit: without the unit's rows, and the table as it is.
	RemovedUnit NeighbourKind = "removed"
	// SeveralRows: without the unit, and with the unit's first row five
	// times (a person with several rows).
	SeveralRows NeighbourKind = "several-rows"
	// OtherStorage: the table as it is, and the table with the unit's value
	// of one column stored as a blob of the same bytes (a storage class
	// SQLite keeps apart).
	OtherStorage NeighbourKind = "other-storage"
	// Added: without the unit; with the unit's first row alone, its
	// columns named in Set replaced (a value stored in another class, a
	// value chosen for an edge). Both worlds first give the other rows
	// what Hold and Distinct ask for.
	Added NeighbourKind = "added"
)

// severalRows is how many rows the SeveralRows person has.
const severalRows = 5

// NeighbourSpec names the table, its unit column, the audited unit and, for
// OtherStorage, the column whose storage changes; for Added, what the unit's
// row and the other rows hold.
type NeighbourSpec struct {
	Table, Unit string
	Value       any
	Column      string
	// Set replaces columns of the unit's row: SQL expressions over the
	// row's own values (CAST(suburb AS BLOB), age + 0.5, 'NaN', 7777).
	Set      map[string]string
	Hold     *Holders
	Distinct *DistinctValues
}

// Holders gives the first Rows other rows (in rowid order) the value Value
// in Column, which no other row may hold: a value held by exactly Rows
// rows. Those rows also take the values of Also (which other rows may
// hold too).
type Holders struct {
	Column string
	Value  any
	Rows   int64
	Also   map[string]any
}

// DistinctValues gives Column exactly Values distinct values over the
// other rows: 1..Values in a column of INTEGER affinity, 'v1'..'vN' in any
// other, each row its own while there are enough values. A table with fewer
// rows is padded with copies of its first row, each with a unit of its own.
type DistinctValues struct {
	Column string
	Values int64
}

// WriteNeighbourOf writes one world of a neighbouring pair built from the
// table in src: with says which of the two. The file at dst is created anew.
func WriteNeighbourOf(ctx context.Context, src, dst string, kind NeighbourKind, spec NeighbourSpec, with bool) error {
	srcDSN, err := sqliteDSN(src)
	if err != nil {
		return err
	}
	return buildNewFile(ctx, dst, true, generatedFileMode, func(ctx context.Context, db *sql.DB) error {
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS src", srcDSN+"?mode=ro"); err != nil {
			return fmt.Errorf("reading %s: %w", src, err)
		}
		ddl, err := columnsDDL(ctx, conn, spec.Table)
		if err != nil {
			return fmt.Errorf("table %q in %s: %w", spec.Table, src, err)
		}
		if _, err := conn.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("creating table %q: %w", spec.Table, err)
		}
		t, u := "main."+pglex.QuoteIdentAlways(spec.Table), pglex.QuoteIdentAlways(spec.Unit)
		from := "src." + pglex.QuoteIdentAlways(spec.Table)
		var stmts []string
		var args [][]any
		keepAll := kind == OtherStorage || (kind == RemovedUnit && with)
		if keepAll {
			stmts, args = append(stmts, "INSERT INTO "+t+" SELECT * FROM "+from), append(args, nil)
		} else {
			stmts, args = append(stmts, "INSERT INTO "+t+" SELECT * FROM "+from+" WHERE "+u+" IS NOT ?"), append(args, []any{spec.Value})
		}
		switch {
		case kind == SeveralRows && with:
			for range severalRows {
				stmts = append(stmts, "INSERT INTO "+t+" SELECT * FROM "+from+" WHERE "+u+" IS ? LIMIT 1")
				args = append(args, []any{spec.Value})
			}
		case kind == OtherStorage && with:
			c := pglex.QuoteIdentAlways(spec.Column)
			stmts = append(stmts, "UPDATE "+t+" SET "+c+" = CAST("+c+" AS BLOB) WHERE "+u+" IS ?")
			args = append(args, []any{spec.Value})
		}
		for i, s := range stmts {
			if _, err := conn.ExecContext(ctx, s, args[i]...); err != nil {
				return fmt.Errorf("writing the %s neighbour: %w", kind, err)
			}
		}
		if kind == Added {
			if err := writeAdded(ctx, conn, spec, with); err != nil {
				return fmt.Errorf("writing the %s neighbour: %w", kind, err)
			}
		}
		_, err = conn.ExecContext(ctx, "DETACH DATABASE src")
		return err
	})
}

// PersonOf reads one unit's first row: the values the audit's queries
// target, by lower-case column name. The unit is the n-th distinct unit in
// the unit column's order (n taken modulo their number), so that a seed
// picks one without reading them all into memory.
func PersonOf(ctx context.Context, src, table, unit string, n int64) (value any, row map[string]any, err error) {
	dsn, err := sqliteDSN(src)
	if err != nil {
		return nil, nil, err
	}
	db, err := sql.Open("sqlite", dsn+"?mode=ro")
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	t, u := pglex.QuoteIdentAlways(table), pglex.QuoteIdentAlways(unit)
	var units int64
	if err := db.QueryRowContext(ctx, "SELECT COUNT(DISTINCT "+u+") FROM "+t).Scan(&units); err != nil {
		return nil, nil, fmt.Errorf("counting the units of %q: %w", table, err)
	}
	if units == 0 {
		return nil, nil, fmt.Errorf("table %q has no privacy unit to audit", table)
	}
	if err := db.QueryRowContext(ctx, "SELECT DISTINCT "+u+" FROM "+t+" WHERE "+u+" IS NOT NULL ORDER BY 1 LIMIT 1 OFFSET ?", ((n%units)+units)%units).Scan(&value); err != nil {
		return nil, nil, fmt.Errorf("choosing a unit of %q: %w", table, err)
	}
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+t+" WHERE "+u+" IS ? LIMIT 1", value)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	if !rows.Next() {
		return nil, nil, fmt.Errorf("unit of %q vanished while it was read", table)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, nil, err
	}
	row = map[string]any{}
	for i, c := range cols {
		row[strings.ToLower(c)] = vals[i]
	}
	return value, row, rows.Err()
}

// columnsDDL creates the attached table's columns with their declared types
// and no constraints: a neighbour may give a unit several rows where the
// original declares the unit a primary key.
func columnsDDL(ctx context.Context, conn *sql.Conn, table string) (string, error) {
	rows, err := conn.QueryContext(ctx, "SELECT name, type FROM src.pragma_table_info(?)", table)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var defs []string
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return "", err
		}
		defs = append(defs, strings.TrimSpace(pglex.QuoteIdentAlways(name)+" "+typ))
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if len(defs) == 0 {
		return "", fmt.Errorf("no such table")
	}
	return "CREATE TABLE " + pglex.QuoteIdentAlways(table) + " (" + strings.Join(defs, ", ") + ")", nil
}

// CountMatching counts the rows of a table holding the given values (a
// person's cell), read-only: the truth an audit aims its threshold at.
func CountMatching(ctx context.Context, src, table string, values map[string]any) (int64, error) {
	dsn, err := sqliteDSN(src)
	if err != nil {
		return 0, err
	}
	db, err := sql.Open("sqlite", dsn+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	q := "SELECT COUNT(*) FROM " + pglex.QuoteIdentAlways(table)
	var conds []string
	var args []any
	for c, v := range values {
		conds, args = append(conds, pglex.QuoteIdentAlways(c)+" IS ?"), append(args, v)
	}
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	var n int64
	if err := db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the audited person's cell in %q: %w", table, err)
	}
	return n, nil
}

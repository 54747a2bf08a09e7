package dataset

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

	"countwall/pglex"
)

// The Added neighbours put the audited unit at an edge of the firewall: a
// value held by exactly a given number of rows, a column with a given number
// of distinct values, the unit's own value stored in another class. The
// other rows (the table without the unit) are the same in both worlds.

// writeAdded changes the other rows as spec.Distinct and spec.Hold ask,
// then, in the world with the unit, adds the unit's first row with
// spec.Set's columns replaced. The table holds the other rows alone, at
// rowids 1..n, when it is called.
func writeAdded(ctx context.Context, conn *sql.Conn, spec NeighbourSpec, with bool) error {
	t := "main." + pglex.QuoteIdentAlways(spec.Table)
	var rows int64
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t).Scan(&rows); err != nil {
		return err
	}
	if d := spec.Distinct; d != nil {
		if err := writeDistinct(ctx, conn, spec, *d, rows); err != nil {
			return err
		}
	}
	if h := spec.Hold; h != nil {
		if h.Rows < 0 || h.Rows > rows {
			return fmt.Errorf("%d rows cannot hold a value in a table of %d other rows", h.Rows, rows)
		}
		c := pglex.QuoteIdentAlways(h.Column)
		sets, args := []string{c + " = ?"}, []any{h.Value}
		also := make([]string, 0, len(h.Also))
		for col := range h.Also {
			also = append(also, col)
		}
		sort.Strings(also)
		for _, col := range also {
			sets, args = append(sets, pglex.QuoteIdentAlways(col)+" = ?"), append(args, h.Also[col])
		}
		if _, err := conn.ExecContext(ctx, "UPDATE "+t+" SET "+strings.Join(sets, ", ")+" WHERE rowid <= ?", append(args, h.Rows)...); err != nil {
			return err
		}
		var held int64
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t+" WHERE "+c+" IS ?", h.Value).Scan(&held); err != nil {
			return err
		}
		if held != h.Rows {
			return fmt.Errorf("%v is held by %d rows of %q, not %d: rows past the first already held it", h.Value, held, h.Column, h.Rows)
		}
	}
	if !with {
		return nil
	}
	res, err := conn.ExecContext(ctx, "INSERT INTO "+t+" SELECT * FROM src."+pglex.QuoteIdentAlways(spec.Table)+" WHERE "+pglex.QuoteIdentAlways(spec.Unit)+" IS ? LIMIT 1", spec.Value)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("the unit %v has no row to add (%v)", spec.Value, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if len(spec.Set) == 0 {
		return nil
	}
	cols := make([]string, 0, len(spec.Set))
	for c := range spec.Set {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	sets := make([]string, len(cols))
	for i, c := range cols {
		sets[i] = pglex.QuoteIdentAlways(c) + " = " + spec.Set[c]
	}
	_, err = conn.ExecContext(ctx, "UPDATE "+t+" SET "+strings.Join(sets, ", ")+" WHERE rowid = ?", id)
	return err
}

// writeDistinct gives d.Column d.Values distinct values over the table's
// rows rowid 1..rows, padding it with copies of its first row when it has
// fewer rows than values.
func writeDistinct(ctx context.Context, conn *sql.Conn, spec NeighbourSpec, d DistinctValues, rows int64) error {
	if d.Values < 1 {
		return fmt.Errorf("a column needs at least one distinct value, not %d", d.Values)
	}
	if rows == 0 {
		return errors.New("no other row to give distinct values")
	}
	t, c := "main."+pglex.QuoteIdentAlways(spec.Table), pglex.QuoteIdentAlways(d.Column)
	integer, err := integerAffinity(ctx, conn, spec.Table, d.Column)
	if err != nil {
		return err
	}
	value := func(n string) string { return "'v' || (" + n + ")" }
	if integer {
		value = func(n string) string { return "(" + n + ")" }
	}
	if _, err := conn.ExecContext(ctx, "UPDATE "+t+" SET "+c+" = "+value("(rowid - 1) % ? + 1"), d.Values); err != nil {
		return err
	}
	if rows >= d.Values {
		return nil
	}
	// The copies: the first row with a new unit (past the largest integer
	// one, or the unit's text with a suffix) and the next value.
	names, err := columnNames(ctx, conn, spec.Table)
	if err != nil {
		return err
	}
	var maxUnit int64
	if err := conn.QueryRowContext(ctx, "SELECT COALESCE(MAX("+pglex.QuoteIdentAlways(spec.Unit)+"), 0) FROM "+t+" WHERE typeof("+pglex.QuoteIdentAlways(spec.Unit)+") = 'integer'").Scan(&maxUnit); err != nil {
		return err
	}
	exprs := make([]string, len(names))
	for i, n := range names {
		switch {
		case strings.EqualFold(n, spec.Unit):
			exprs[i] = fmt.Sprintf("CASE WHEN typeof(f.%[1]s) = 'integer' THEN %[2]d + k.i ELSE f.%[1]s || '~' || k.i END", pglex.QuoteIdentAlways(n), maxUnit)
		case strings.EqualFold(n, d.Column):
			exprs[i] = value("k.i")
		default:
			exprs[i] = "f." + pglex.QuoteIdentAlways(n)
		}
	}
	_, err = conn.ExecContext(ctx, "WITH RECURSIVE k(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM k WHERE i < ?) "+
		"INSERT INTO "+t+" SELECT "+strings.Join(exprs, ", ")+" FROM k, (SELECT * FROM "+t+" WHERE rowid = 1) AS f", rows+1, d.Values)
	return err
}

func columnNames(ctx context.Context, conn *sql.Conn, table string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, "SELECT name FROM main.pragma_table_info(?) ORDER BY cid", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// integerAffinity reports whether a column's declared type gives it INTEGER
// affinity (SQLite's first rule: the type names INT).
func integerAffinity(ctx context.Context, conn *sql.Conn, table, column string) (bool, error) {
	var typ string
	err := conn.QueryRowContext(ctx, "SELECT type FROM main.pragma_table_info(?) WHERE name = ? COLLATE NOCASE", table, column).Scan(&typ)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("table %q has no column %q", table, column)
	}
	return strings.Contains(strings.ToUpper(typ), "INT"), err
}

// ColumnFacts is what an audit reads of one column, over the rows other
// than the audited unit's, to place the unit at the firewall's edges.
type ColumnFacts struct {
	Name string // lower case
	// Integer is true for a column of INTEGER affinity.
	Integer bool
	// Distinct is how many distinct non-NULL values it holds.
	Distinct int64
	// Common is the value the most rows hold (the smallest such), and
	// CommonRows how many do; Next is the next most common value (nil when
	// there is none).
	Common     any
	CommonRows int64
	Next       any
	// MaxInt is the largest integer it holds, when HasInt.
	MaxInt int64
	HasInt bool
}

// ColumnsOf reads the facts of every column of a table over the rows whose
// unit is not value, with how many such rows there are, in the table's
// column order.
func ColumnsOf(ctx context.Context, src, table, unit string, value any) ([]ColumnFacts, int64, error) {
	dsn, err := sqliteDSN(src)
	if err != nil {
		return nil, 0, err
	}
	db, err := sql.Open("sqlite", dsn+"?mode=ro")
	if err != nil {
		return nil, 0, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer conn.Close()
	names, err := columnNames(ctx, conn, table)
	if err != nil {
		return nil, 0, err
	}
	if len(names) == 0 {
		return nil, 0, fmt.Errorf("no table %q in %s", table, src)
	}
	t, others := pglex.QuoteIdentAlways(table), " WHERE "+pglex.QuoteIdentAlways(unit)+" IS NOT ?"
	var rows int64
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t+others, value).Scan(&rows); err != nil {
		return nil, 0, err
	}
	facts := make([]ColumnFacts, len(names))
	for i, n := range names {
		f := ColumnFacts{Name: strings.ToLower(n)}
		c := pglex.QuoteIdentAlways(n)
		if f.Integer, err = integerAffinity(ctx, conn, table, n); err != nil {
			return nil, 0, err
		}
		var maxInt sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(DISTINCT "+c+"), MAX(CASE WHEN typeof("+c+") = 'integer' THEN "+c+" END) FROM "+t+others, value).Scan(&f.Distinct, &maxInt); err != nil {
			return nil, 0, fmt.Errorf("reading column %q: %w", n, err)
		}
		f.MaxInt, f.HasInt = maxInt.Int64, maxInt.Valid
		common, err := conn.QueryContext(ctx, "SELECT "+c+", COUNT(*) FROM "+t+others+" AND "+c+" IS NOT NULL GROUP BY "+c+" ORDER BY 2 DESC, 1 LIMIT 2", value)
		if err != nil {
			return nil, 0, fmt.Errorf("reading column %q: %w", n, err)
		}
		for k := 0; common.Next(); k++ {
			var v any
			var held int64
			if err := common.Scan(&v, &held); err != nil {
				common.Close()
				return nil, 0, err
			}
			if k == 0 {
				f.Common, f.CommonRows = v, held
			} else {
				f.Next = v
			}
		}
		if err := errors.Join(common.Err(), common.Close()); err != nil {
			return nil, 0, fmt.Errorf("reading column %q: %w", n, err)
		}
		facts[i] = f
	}
	return facts, rows, nil
}

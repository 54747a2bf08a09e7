package dataset

import (
	"context"
	"database/sql"
	"fmt"
	"sort"

	"github.com/dustin/go-humanize"

	"countwall/pglex"
)

// A table where a person has several rows (orders, visits) is counted by
// laplace and gaussian at most max_rows_per_unit rows of a person per
// cell, 1 unless the config says otherwise: COUNT(*) then counts persons,
// not rows. init and load read how many rows each unit has and propose a
// bound, which is public metadata the owner reviews, as a domain read from
// the data is.

// KeepShare is the share of the rows the proposed bound counts: the
// smallest bound that counts at least this much of the table. Each row
// above it is left out of a count (a bias down); each row more in the
// bound scales the noise of laplace and gaussian.
const KeepShare = 0.95

// RowsPerUnit is how the rows of a table spread over its units, and the
// bound proposed for max_rows_per_unit.
type RowsPerUnit struct {
	Rows, Units int64
	Max         int64 // the most rows one unit has
	Bound       int64 // the smallest bound that counts KeepShare of the rows
	Kept        int64 // the rows a count keeps at Bound
}

// unitsWith is how many units have Rows rows.
type unitsWith struct{ Rows, Units int64 }

// rowsPerUnitOf summarises the units' row counts (any order).
func rowsPerUnitOf(hist []unitsWith) RowsPerUnit {
	var r RowsPerUnit
	for _, h := range hist {
		r.Rows += h.Rows * h.Units
		r.Units += h.Units
		r.Max = max(r.Max, h.Rows)
	}
	kept := func(c int64) int64 {
		var k int64
		for _, h := range hist {
			k += min(h.Rows, c) * h.Units
		}
		return k
	}
	// kept rises with the bound: the smallest one keeping the share.
	need := float64(r.Rows) * KeepShare
	r.Bound = 1 + int64(sort.Search(int(max(r.Max, 1)), func(i int) bool { return float64(kept(int64(i+1))) >= need }))
	r.Bound = min(r.Bound, max(r.Max, 1))
	r.Kept = kept(r.Bound)
	return r
}

// ReadRowsPerUnit reads how table's rows spread over its unit column in
// the SQLite database db (NULL units count as one unit, as they share a
// value).
func ReadRowsPerUnit(ctx context.Context, db *sql.DB, table, unit string) (RowsPerUnit, error) {
	q := "SELECT n, COUNT(*) FROM (SELECT COUNT(*) AS n FROM " + pglex.QuoteIdentAlways(table) +
		" GROUP BY " + pglex.QuoteIdentAlways(unit) + ") GROUP BY n"
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return RowsPerUnit{}, fmt.Errorf("reading the rows per unit of %s: %w", table, err)
	}
	defer rows.Close()
	var hist []unitsWith
	for rows.Next() {
		var h unitsWith
		if err := rows.Scan(&h.Rows, &h.Units); err != nil {
			return RowsPerUnit{}, err
		}
		hist = append(hist, h)
	}
	if err := rows.Err(); err != nil {
		return RowsPerUnit{}, err
	}
	return rowsPerUnitOf(hist), nil
}

// ObserveRowsPerUnit reads t's rows per unit from the SQLite database at
// path and proposes its max_rows_per_unit, unless each row is a unit of its
// own (unit_keyed), where the default of 1 counts every row.
func ObserveRowsPerUnit(ctx context.Context, path string, t Table) (Table, error) {
	if t.UnitKeyed {
		return t, nil
	}
	dsn, err := sqliteDSN(path)
	if err != nil {
		return t, err
	}
	db, err := sql.Open("sqlite", dsn+"?mode=ro")
	if err != nil {
		return t, fmt.Errorf("opening %s: %w", path, err)
	}
	defer db.Close()
	r, err := ReadRowsPerUnit(ctx, db, t.Name, t.PrivacyUnit)
	if err != nil || r.Units == 0 {
		return t, err
	}
	t.MaxRowsPerUnit, t.RowsPerUnit = r.Bound, &r
	return t, nil
}

// Summary says what the rows per unit are and what the bound keeps, for
// the owner's review.
func (r RowsPerUnit) Summary() string {
	return fmt.Sprintf("%s rows of %s units (%.1f a unit on average, at most %s), of which it counts %.1f%%",
		humanize.Comma(r.Rows), humanize.Comma(r.Units), float64(r.Rows)/float64(r.Units), humanize.Comma(r.Max), 100*float64(r.Kept)/float64(r.Rows))
}

// rowsBoundSnippet is the config's max_rows_per_unit for t, with what it
// means and, when read from the data, the mark to review it; "" when t
// sets none.
func (t Table) rowsBoundSnippet() string {
	if t.MaxRowsPerUnit < 1 {
		return ""
	}
	line := fmt.Sprintf("    max_rows_per_unit: %d\n", t.MaxRowsPerUnit)
	r := t.RowsPerUnit
	if r == nil {
		return line
	}
	return fmt.Sprintf(`    # REVIEW before analysts connect: max_rows_per_unit was read from the data (%s
    # rows of %s units, %.1f a unit on average, at most %s). laplace and gaussian count
    # at most this many rows of one unit per cell; with 1, the default, COUNT(*) counts
    # units, not rows. %d counts %.1f%% of the rows (COUNT(*) is %s of %s before the
    # noise, a bias down); a larger bound counts more and scales the noise with it.
    # Read from the data, it says how many rows the largest contributors have: prefer a
    # bound from public knowledge (a form's limit, a policy). Other mechanisms count
    # every row.
    max_rows_per_unit: %d  # read from the data: REVIEW
`, humanize.Comma(r.Rows), humanize.Comma(r.Units), float64(r.Rows)/float64(r.Units), humanize.Comma(r.Max),
		r.Bound, 100*float64(r.Kept)/float64(r.Rows), humanize.Comma(r.Kept), humanize.Comma(r.Rows), t.MaxRowsPerUnit)
}

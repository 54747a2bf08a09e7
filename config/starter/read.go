// Package starter writes a whole runnable countwall config for one table of
// a SQLite database: the paths, one analyst, the budget, the table with its
// columns, the domains read from the data (marked for review, since a
// domain read from the data is not public knowledge) and the mechanisms.
// `countwall load --config-out` and `countwall init` use it.
package starter

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"

	_ "modernc.org/sqlite" // the database is read with the sqlite driver

	"countwall/dataset"
	"countwall/pglex"
)

// MaxCategories is the most distinct values a text column may have for its
// values to be written as a domain: beyond it (names, free text, ids) a
// list would be the data itself.
const MaxCategories = 50

// MaxRangeValues is the widest integer range written as a domain: the
// default policy.max_groups, beyond which no GROUP BY over the column is
// answered, while its ends would still say what the smallest and largest
// values are (a weight, an income).
const MaxRangeValues = 10_000

// openReadOnly opens the SQLite database at path read-only.
func openReadOnly(path string) (*sql.DB, error) {
	u := url.URL{Scheme: "file", Opaque: path, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return db, nil
}

// ReadTable describes table of the SQLite database at path, with unit as
// its privacy unit: the columns and their types as declared, and whether
// each row has a unit of its own (unit_keyed). The database is opened
// read-only.
func ReadTable(ctx context.Context, path, table, unit string) (dataset.Table, error) {
	if _, err := os.Stat(path); err != nil {
		return dataset.Table{}, fmt.Errorf("the database: %w", err)
	}
	db, err := openReadOnly(path)
	if err != nil {
		return dataset.Table{}, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?)", table)
	if err != nil {
		return dataset.Table{}, fmt.Errorf("reading the columns of %s: %w", table, err)
	}
	defer rows.Close()
	if err := dataset.CheckName("table", table); err != nil {
		return dataset.Table{}, err
	}
	t := dataset.Table{Name: strings.ToLower(table), PrivacyUnit: strings.ToLower(unit)}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return dataset.Table{}, err
		}
		if err := dataset.CheckName("column", name); err != nil {
			return dataset.Table{}, fmt.Errorf("table %s: %w", table, err)
		}
		t.Columns = append(t.Columns, dataset.Column{Name: strings.ToLower(name), Type: columnType(typ)})
	}
	if err := rows.Err(); err != nil {
		return dataset.Table{}, err
	}
	if len(t.Columns) == 0 {
		return dataset.Table{}, fmt.Errorf("%s has no table %q", path, table)
	}
	if _, ok := t.Column(unit); !ok {
		return dataset.Table{}, fmt.Errorf("table %s has no column %q for the privacy unit (its columns: %s)", table, unit, strings.Join(t.ColumnNames(), ", "))
	}
	var n, distinct, null int64
	q := "SELECT COUNT(*), COUNT(DISTINCT " + pglex.QuoteIdentAlways(t.PrivacyUnit) + "), COUNT(*) - COUNT(" + pglex.QuoteIdentAlways(t.PrivacyUnit) + ") FROM " + pglex.QuoteIdentAlways(t.Name)
	if err := db.QueryRowContext(ctx, q).Scan(&n, &distinct, &null); err != nil {
		return dataset.Table{}, fmt.Errorf("counting the units of %s: %w", table, err)
	}
	t.UnitKeyed = n > 0 && distinct == n && null == 0
	return t, nil
}

// columnType reads a declared SQLite type by SQLite's affinity rules.
func columnType(declared string) string {
	d := strings.ToUpper(declared)
	switch {
	case strings.Contains(d, "INT"):
		return dataset.TypeInteger
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"):
		return dataset.TypeText
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"):
		return dataset.TypeReal
	}
	return dataset.TypeText
}

// ObserveDomains reads from the data a domain for each column of t but the
// privacy unit: an integer column's smallest and largest values when they
// span at most MaxRangeValues, a text column's values when there are at
// most MaxCategories of them. It returns
// t with those domains set and each marked in its Doc as read from the data,
// and the names of the columns that got one.
func ObserveDomains(ctx context.Context, path string, t dataset.Table) (dataset.Table, []string, error) {
	db, err := openReadOnly(path)
	if err != nil {
		return t, nil, err
	}
	defer db.Close()
	out := t
	out.Columns = append([]dataset.Column(nil), t.Columns...)
	var observed []string
	for i, c := range out.Columns {
		if c.Name == t.PrivacyUnit || c.HasDomain() {
			continue
		}
		col, from := pglex.QuoteIdentAlways(c.Name), " FROM "+pglex.QuoteIdentAlways(t.Name)
		switch c.Type {
		case dataset.TypeInteger:
			var lo, hi sql.NullInt64
			if err := db.QueryRowContext(ctx, "SELECT MIN("+col+"), MAX("+col+")"+from).Scan(&lo, &hi); err != nil {
				return t, nil, fmt.Errorf("reading the range of %s: %w", c.Name, err)
			}
			if !lo.Valid || hi.Int64-lo.Int64 >= MaxRangeValues {
				continue
			}
			out.Columns[i].Min, out.Columns[i].Max, out.Columns[i].HasRange = lo.Int64, hi.Int64, true
		case dataset.TypeText:
			cats, err := categories(ctx, db, col, from)
			if err != nil {
				return t, nil, fmt.Errorf("reading the values of %s: %w", c.Name, err)
			}
			if cats == nil {
				continue
			}
			out.Columns[i].Categories = cats
		default:
			continue
		}
		out.Columns[i].Doc = ReviewMark
		observed = append(observed, c.Name)
	}
	return out, observed, nil
}

// ReviewMark is the comment on a domain read from the data.
const ReviewMark = "read from the data: REVIEW"

// categories is a text column's distinct non-NULL values in SQLite's
// order, nil when there are more than MaxCategories.
func categories(ctx context.Context, db *sql.DB, col, from string) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT DISTINCT "+col+from+" WHERE "+col+" IS NOT NULL LIMIT ?", MaxCategories+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		if out = append(out, v); len(out) > MaxCategories {
			return nil, rows.Close()
		}
	}
	sort.Strings(out)
	return out, rows.Err()
}

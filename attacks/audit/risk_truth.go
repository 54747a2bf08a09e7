package audit

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sort"

	"countwall/pglex"
)

// A long history's findings number in the hundreds of thousands, each
// scored by a COUNT over the protected table; without an index every one
// is a scan (4.6 ms on a 45,211-row table). The scorers each read the
// tables the findings name into a database of their own in memory, with an
// index on every column and the planner's statistics, and score their
// share of the findings in batches, in parallel. A search's findings are
// ANDs of a dozen conditions none of which is selective alone (the best
// index still leads to hundreds of rows), so where the table is small
// enough each column's index holds every other column after it: the
// conditions are read from the index, without a lookup of each row in the
// table (which was most of the scoring).

// scoreBatch is how many findings a scorer takes at a time.
const scoreBatch = 512

// scorers is how many score in parallel: one per core the process may use.
func scorers(findings int) int {
	return max(1, min(runtime.GOMAXPROCS(0), (findings+scoreBatch-1)/scoreBatch))
}

// openTruthCopy opens a database in memory holding a copy of each of
// tables from the protected SQLite database at truthPath (opened
// read-only), declared as there (types and collations), each column
// indexed. It is one connection: a database in memory is its
// connection's own.
func openTruthCopy(ctx context.Context, truthPath string, tables []string) (*sql.Conn, func(), error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, nil, fmt.Errorf("opening a database in memory to score: %w", err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("opening a database in memory to score: %w", err)
	}
	closeAll := func() { conn.Close(); db.Close() }
	if err := copyTables(ctx, conn, truthPath, tables); err != nil {
		closeAll()
		return nil, nil, err
	}
	return conn, closeAll, nil
}

// copyTables copies tables from truthPath into conn's main database and
// indexes every column.
func copyTables(ctx context.Context, conn *sql.Conn, truthPath string, tables []string) error {
	uri := "file:" + truthPath + "?mode=ro"
	if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS truth", uri); err != nil {
		return fmt.Errorf("opening the protected database to score: %w", err)
	}
	for _, t := range tables {
		var create string
		err := conn.QueryRowContext(ctx, "SELECT sql FROM truth.sqlite_schema WHERE type = 'table' AND name = ?", t).Scan(&create)
		if err == sql.ErrNoRows {
			continue // a table the database lacks: its findings stay unscored
		}
		if err != nil {
			return fmt.Errorf("reading the protected table %s to score: %w", t, err)
		}
		q := pglex.QuoteIdent(t)
		if _, err := conn.ExecContext(ctx, create); err != nil {
			return fmt.Errorf("copying the protected table %s to score: %w", t, err)
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO main."+q+" SELECT * FROM truth."+q); err != nil {
			return fmt.Errorf("copying the protected table %s to score: %w", t, err)
		}
		if err := indexColumns(ctx, conn, t); err != nil {
			return err
		}
	}
	if _, err := conn.ExecContext(ctx, "DETACH DATABASE truth"); err != nil {
		return err
	}
	_, err := conn.ExecContext(ctx, "ANALYZE main")
	return err
}

// maxCoveringBytes bounds a copy's covering indexes: each is about as
// large as its table, one a column.
const maxCoveringBytes = 256 << 20

// indexColumns indexes each column of the copy of table: by the column
// alone, or, when the table's size times its columns is within
// maxCoveringBytes, by the column and then every other.
func indexColumns(ctx context.Context, conn *sql.Conn, table string) error {
	cols, err := columnsOf(ctx, conn, table)
	if err != nil {
		return err
	}
	var pages, pageSize int64
	if err := conn.QueryRowContext(ctx, "SELECT (SELECT page_count FROM pragma_page_count), (SELECT page_size FROM pragma_page_size)").Scan(&pages, &pageSize); err != nil {
		return fmt.Errorf("sizing the copy of %s to score: %w", table, err)
	}
	covering := pages*pageSize*int64(len(cols)) <= maxCoveringBytes
	q := pglex.QuoteIdent(table)
	for i, c := range cols {
		on := pglex.QuoteIdent(c)
		for j, other := range cols {
			if covering && j != i {
				on += ", " + pglex.QuoteIdent(other)
			}
		}
		idx := pglex.QuoteIdent(fmt.Sprintf("score_%s_%d", table, i))
		if _, err := conn.ExecContext(ctx, "CREATE INDEX main."+idx+" ON "+q+" ("+on+")"); err != nil {
			return fmt.Errorf("indexing the copy of %s to score: %w", table, err)
		}
	}
	return nil
}

// columnsOf are the columns of table in conn's main database.
func columnsOf(ctx context.Context, conn *sql.Conn, table string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, fmt.Errorf("reading the columns of %s to score: %w", table, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// tableNames are the distinct tables of the findings to score, sorted.
func tableNames(jobs []scoreJob) []string {
	seen := map[string]bool{}
	var out []string
	for _, j := range jobs {
		if t := j.f.Table; !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

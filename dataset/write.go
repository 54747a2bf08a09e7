package dataset

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"countwall/pglex"
)

// Progress is told how many rows are done out of how many. It is called from
// the goroutine doing the work, often (every few hundred rows), so it should
// be cheap; a terminal renderer throttles its own output.
type Progress func(done, total int64)

// WriteOptions say how a new database file is written.
type WriteOptions struct {
	// Force replaces an existing file. Without it an existing file is an
	// error wrapping ErrExists and is left untouched.
	Force bool
	// Progress, when not nil, follows the rows written.
	Progress Progress
}

// ErrExists is wrapped by the error for a destination that already exists
// when WriteOptions.Force is not set.
var ErrExists = errors.New("file already exists")

// File modes for the files this package creates: generated data is public by
// construction, imported data may be sensitive and is kept to its owner.
const (
	generatedFileMode fs.FileMode = 0o644
	importedFileMode  fs.FileMode = 0o600
)

// sqliteDSN names a database file for the sqlite driver as a file: URI, so
// that a path containing '?', '#' or '%' is not misread as URI syntax, with
// the given PRAGMAs applied to every connection.
func sqliteDSN(path string, pragmas ...string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", path, err)
	}
	u := url.URL{Path: filepath.ToSlash(abs)}
	var q []string
	for _, p := range pragmas {
		q = append(q, "_pragma="+url.QueryEscape(p))
	}
	dsn := "file:" + u.EscapedPath()
	if len(q) > 0 {
		dsn += "?" + strings.Join(q, "&")
	}
	return dsn, nil
}

// checkDestination refuses a destination that is a directory, or that exists
// when force is not set.
func checkDestination(path string, force bool) error {
	if path == "" {
		return errors.New("no output file given")
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("checking %s: %w", path, err)
	case info.IsDir():
		return fmt.Errorf("%s is a directory, not a database file", path)
	case !force:
		return fmt.Errorf("refusing to overwrite %s: %w", path, ErrExists)
	}
	return nil
}

// buildNewFile builds a SQLite database at path through build, which gets a
// connection pool limited to one connection. The database is built under a
// temporary name in the same directory (so the final rename stays on one
// file system) with journaling and syncing off, since a half-built temporary
// file is thrown away anyway; it is synced and renamed into place only when
// build succeeds. On any failure, including a cancelled ctx, no file is left.
func buildNewFile(ctx context.Context, path string, force bool, mode fs.FileMode, build func(context.Context, *sql.DB) error) (err error) {
	if err := checkDestination(path, force); err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("creating a temporary file beside %s: %w", path, err)
	}
	tmpPath := tmp.Name()
	if err := tmp.Close(); err != nil {
		os.Remove(tmpPath)
		return fmt.Errorf("creating %s: %w", tmpPath, err)
	}
	placed := false
	defer func() {
		if !placed {
			os.Remove(tmpPath)
			os.Remove(tmpPath + "-journal")
		}
	}()

	dsn, err := sqliteDSN(tmpPath, "journal_mode(OFF)", "synchronous(OFF)")
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("opening %s: %w", tmpPath, err)
	}
	db.SetMaxOpenConns(1)
	if err := build(ctx, db); err != nil {
		db.Close()
		return err
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmpPath, err)
	}
	if err := syncFile(tmpPath, mode); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := placeFile(tmpPath, path, force); err != nil {
		return err
	}
	placed = true
	syncDir(dir)
	return nil
}

// syncFile sets the final mode of a finished file and flushes it to disk, so
// that the rename never publishes a file whose contents are still in flight.
func syncFile(path string, mode fs.FileMode) error {
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("setting the mode of %s: %w", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	return nil
}

// placeFile moves the finished temporary file to its destination. Without
// force it links instead of renaming, because a link fails if the destination
// appeared in the meantime where a rename would silently replace it; on file
// systems without hard links it falls back to a checked rename.
func placeFile(tmpPath, path string, force bool) error {
	if !force {
		err := os.Link(tmpPath, path)
		if err == nil {
			os.Remove(tmpPath)
			return nil
		}
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("refusing to overwrite %s: %w", path, ErrExists)
		}
		if err := checkDestination(path, false); err != nil {
			return err
		}
	}
	if err := os.Rename(tmpPath, path); err != nil {
		return fmt.Errorf("moving the finished database to %s: %w", path, err)
	}
	return nil
}

// syncDir makes a rename durable. It is best effort: some systems cannot
// sync a directory, and the file itself is already complete either way.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// maxBatchParams keeps a multi-row INSERT under SQLite's default limit of
// 32766 bound parameters.
const (
	maxBatchRows   = 256
	maxBatchParams = 30000
)

// insertRows inserts total rows into table, asking next to fill each row (in
// column order) before it is inserted. Rows go in multi-row INSERT
// statements, prepared once, which is several times faster than one
// statement per row through database/sql.
func insertRows(ctx context.Context, tx *sql.Tx, table string, columns []string, total int64, progress Progress, next func(row []any) error) error {
	if len(columns) == 0 {
		return fmt.Errorf("table %s has no columns", table)
	}
	batch := int64(min(maxBatchRows, maxBatchParams/len(columns)))
	prepare := func(rows int64) (*sql.Stmt, error) {
		quoted := make([]string, len(columns))
		for i, c := range columns {
			quoted[i] = pglex.QuoteIdentAlways(c)
		}
		tuple := "(" + strings.TrimSuffix(strings.Repeat("?,", len(columns)), ",") + ")"
		query := "INSERT INTO " + pglex.QuoteIdentAlways(table) + " (" + strings.Join(quoted, ", ") + ") VALUES " +
			strings.TrimSuffix(strings.Repeat(tuple+",", int(rows)), ",")
		stmt, err := tx.PrepareContext(ctx, query)
		if err != nil {
			return nil, fmt.Errorf("preparing the insert into %s: %w", table, err)
		}
		return stmt, nil
	}

	var full *sql.Stmt
	if total >= batch {
		var err error
		if full, err = prepare(batch); err != nil {
			return err
		}
		defer full.Close()
	}
	args := make([]any, batch*int64(len(columns)))
	for done := int64(0); done < total; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(batch, total-done)
		for i := int64(0); i < n; i++ {
			if err := next(args[i*int64(len(columns)) : (i+1)*int64(len(columns))]); err != nil {
				return err
			}
		}
		stmt := full
		if n < batch {
			var err error
			if stmt, err = prepare(n); err != nil {
				return err
			}
			defer stmt.Close()
		}
		if _, err := stmt.ExecContext(ctx, args[:n*int64(len(columns))]...); err != nil {
			return fmt.Errorf("inserting rows %d to %d into %s: %w", done+1, done+n, table, err)
		}
		done += n
		if progress != nil {
			progress(done, total)
		}
	}
	return nil
}

// createAndFill creates table with the given column definitions in one
// transaction and fills it through next.
func createAndFill(ctx context.Context, db *sql.DB, t Table, columnDefs []string, total int64, progress Progress, next func(row []any) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting the transaction: %w", err)
	}
	defer tx.Rollback()
	create := "CREATE TABLE " + pglex.QuoteIdentAlways(t.Name) + " (" + strings.Join(columnDefs, ", ") + ")"
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("creating table %s: %w", t.Name, err)
	}
	if err := insertRows(ctx, tx, t.Name, t.ColumnNames(), total, progress, next); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing table %s: %w", t.Name, err)
	}
	return nil
}

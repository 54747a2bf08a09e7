package pgwire

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/lib/pq"
)

// The Go drivers of the matrix: pgx in its simple and extended protocols,
// a pgx.Batch in each, and lib/pq. They discover the schema as Go
// programs do, through information_schema.

const (
	matrixTables  = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
	matrixColumns = "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position"
)

func goClients() []matrixClient {
	pgxClient := func(mode pgx.QueryExecMode, batch bool) func(*testing.T, *testServer) string {
		return func(t *testing.T, ts *testServer) string { return pgxReport(t, ts.connect(t, mode), batch) }
	}
	return []matrixClient{
		{name: "pgx/simple", types: pgTypeNames, values: "int64 int64", run: pgxClient(pgx.QueryExecModeSimpleProtocol, false)},
		{name: "pgx/extended", types: pgTypeNames, values: "int64 int64", run: pgxClient(pgx.QueryExecModeCacheStatement, false)},
		{name: "pgx/batch-simple", types: pgTypeNames, values: "int64 int64", run: pgxClient(pgx.QueryExecModeSimpleProtocol, true)},
		{name: "pgx/batch-extended", types: pgTypeNames, values: "int64 int64", run: pgxClient(pgx.QueryExecModeCacheStatement, true)},
		{name: "lib/pq", types: pgTypeNames, values: "int64 int64", run: pqReport, noCopy: "lib/pq implements COPY FROM STDIN only (pq: COPY TO is not supported)"},
	}
}

// report builds a client's report, a line per step.
type report struct{ b strings.Builder }

func (r *report) line(key, value string) { fmt.Fprintf(&r.b, "%s: %s\n", key, value) }

// failed writes the step's error: SQLSTATE and message where the server
// sent them.
func (r *report) failed(key string, err error) {
	var pgErr *pgconn.PgError
	var pqErr *pq.Error
	switch {
	case errors.As(err, &pgErr):
		r.line(key, pgErr.Code+" "+pgErr.Message)
	case errors.As(err, &pqErr):
		r.line(key, string(pqErr.Code)+" "+pqErr.Message)
	case err == nil:
		r.line(key, "no error")
	default:
		r.line(key, "error "+err.Error())
	}
}

// cursorLines writes the chunk sizes, the rows read through a cursor and
// the Go types of the first row's values.
func (r *report) cursorLines(chunks []string, rows []string, types string, err error) {
	if err != nil {
		r.failed("chunks", err)
		r.failed("rows", err)
		r.failed("types", err)
		return
	}
	r.line("chunks", strings.Join(chunks, " "))
	r.line("rows", strings.Join(rows, " "))
	r.line("types", types)
}

// count writes a count, or the error that came instead.
func (r *report) count(key string, n int64, err error) {
	if err != nil {
		r.failed(key, err)
		return
	}
	r.line(key, fmt.Sprint(n))
}

func schemaLine(tables []string, columns []string) string {
	return strings.Join(tables, " ") + " " + strings.Join(columns, " ")
}

func pgxReport(t *testing.T, conn *pgx.Conn, batch bool) string {
	ctx := t.Context()
	var r report
	if batch {
		pgxBatch(ctx, conn, &r)
	} else {
		tables, columns, err := pgxSchema(ctx, conn)
		if err != nil {
			r.failed("schema", err)
		} else {
			r.line("schema", schemaLine(tables, columns))
		}
		var n int64
		if err := conn.QueryRow(ctx, matrixCount, matrixAge, matrixSex, matrixScore).Scan(&n); err != nil {
			r.failed("count", err)
		} else {
			r.line("count", fmt.Sprint(n))
		}
	}
	var n int64
	err := conn.QueryRow(ctx, matrixNull, nil).Scan(&n)
	r.count("null", n, err)
	r.cursorLines(pgxCursor(ctx, conn))
	var out bytes.Buffer
	if _, err := conn.PgConn().CopyTo(ctx, &out, "COPY ("+matrixCopy+") TO STDOUT WITH (FORMAT csv, HEADER true)"); err != nil {
		r.failed("copy", err)
	} else {
		r.line("copy", strings.ReplaceAll(strings.TrimSuffix(out.String(), "\n"), "\n", "|"))
	}
	_, err = conn.Exec(ctx, matrixRefused)
	r.failed("refused", err)
	return r.b.String()
}

func pgxSchema(ctx context.Context, conn *pgx.Conn) (tables, columns []string, err error) {
	rows, _ := conn.Query(ctx, matrixTables)
	if tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return nil, nil, err
	}
	rows, _ = conn.Query(ctx, matrixColumns, "visits")
	columns, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
		var name, typ string
		err := row.Scan(&name, &typ)
		return name + ":" + typ, err
	})
	return tables, columns, err
}

// pgxBatch sends the schema discovery and the count in one pgx.Batch:
// one Query message in the simple protocol, one Sync in the extended.
func pgxBatch(ctx context.Context, conn *pgx.Conn, r *report) {
	b := &pgx.Batch{}
	var tables, columns []string
	var n int64
	b.Queue(matrixTables).Query(func(rows pgx.Rows) (err error) {
		tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	b.Queue(matrixColumns, "visits").Query(func(rows pgx.Rows) (err error) {
		columns, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
			var name, typ string
			err := row.Scan(&name, &typ)
			return name + ":" + typ, err
		})
		return err
	})
	b.Queue(matrixCount, matrixAge, matrixSex, matrixScore).QueryRow(func(row pgx.Row) error { return row.Scan(&n) })
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		r.failed("schema", err)
		r.failed("count", err)
		return
	}
	r.line("schema", schemaLine(tables, columns))
	r.line("count", fmt.Sprint(n))
}

// pgxCursor reads matrixCursor through DECLARE and FETCH in a
// transaction, as pgx programs read a large answer.
func pgxCursor(ctx context.Context, conn *pgx.Conn) (chunks, rows []string, types string, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, nil, "", err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	if _, err := tx.Exec(ctx, "DECLARE matrix CURSOR FOR "+matrixCursor); err != nil {
		return nil, nil, "", err
	}
	for {
		got, err := pgx.CollectRows(mustQuery(tx.Query(ctx, fmt.Sprintf("FETCH %d FROM matrix", matrixChunk))), func(row pgx.CollectableRow) (string, error) {
			v, err := row.Values() // as pgx decodes each column's type
			if err == nil && types == "" {
				types = fmt.Sprintf("%T %T", v[0], v[1])
			}
			return fmt.Sprintf("%v=%v", v[0], v[1]), err
		})
		if err != nil {
			return nil, nil, "", err
		}
		if len(got) == 0 {
			return chunks, rows, types, tx.Commit(ctx)
		}
		chunks = append(chunks, fmt.Sprint(len(got)))
		rows = append(rows, got...)
	}
}

// mustQuery drops Query's error, which pgx also reports through the rows.
func mustQuery(rows pgx.Rows, _ error) pgx.Rows { return rows }

// pqReport runs the matrix through database/sql and lib/pq, which binds
// parameters through the extended protocol, sent untyped as text.
func pqReport(t *testing.T, ts *testServer) string {
	ctx := t.Context()
	db, err := sql.Open("postgres", ts.dsn(testAnalyst, testPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var r report
	tables, columns, err := pqSchema(ctx, db)
	if err != nil {
		r.failed("schema", err)
	} else {
		r.line("schema", schemaLine(tables, columns))
	}
	var n int64
	if err := db.QueryRowContext(ctx, matrixCount, matrixAge, matrixSex, matrixScore).Scan(&n); err != nil {
		r.failed("count", err)
	} else {
		r.line("count", fmt.Sprint(n))
	}
	err = db.QueryRowContext(ctx, matrixNull, nil).Scan(&n)
	r.count("null", n, err)
	r.cursorLines(pqCursor(ctx, db))
	r.line("copy", "skipped")
	_, err = db.ExecContext(ctx, matrixRefused)
	r.failed("refused", err)
	return r.b.String()
}

func pqSchema(ctx context.Context, db *sql.DB) (tables, columns []string, err error) {
	if tables, err = pqStrings(db.QueryContext(ctx, matrixTables)); err != nil {
		return nil, nil, err
	}
	columns, err = pqStrings(db.QueryContext(ctx, matrixColumns, "visits"))
	return tables, columns, err
}

// pqStrings reads rows of one or two columns as name or name:type.
func pqStrings(rows *sql.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		v := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range v {
			ptrs[i] = &v[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, strings.Join(v, ":"))
	}
	return out, rows.Err()
}

func pqCursor(ctx context.Context, db *sql.DB) (chunks, rows []string, types string, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, "", err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	if _, err := tx.ExecContext(ctx, "DECLARE matrix CURSOR FOR "+matrixCursor); err != nil {
		return nil, nil, "", err
	}
	for {
		got, err := pqValues(tx.QueryContext(ctx, fmt.Sprintf("FETCH %d FROM matrix", matrixChunk)))
		if err != nil {
			return nil, nil, "", err
		}
		if len(got) == 0 {
			return chunks, rows, types, tx.Commit()
		}
		if types == "" {
			types = fmt.Sprintf("%T %T", got[0][0], got[0][1])
		}
		chunks = append(chunks, fmt.Sprint(len(got)))
		for _, g := range got {
			rows = append(rows, fmt.Sprintf("%v=%v", g[0], g[1]))
		}
	}
}

// pqValues reads rows of two columns as lib/pq types them.
func pqValues(rows *sql.Rows, err error) ([][2]any, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]any
	for rows.Next() {
		var v [2]any
		if err := rows.Scan(&v[0], &v[1]); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

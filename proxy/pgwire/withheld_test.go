package pgwire

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A withheld count reaches a client as NULL with the notice naming it,
// over both protocols, as the Engine answers it in process.
func TestWithheldCountIsNullOnTheWire(t *testing.T) {
	for _, mechanism := range []string{"suppress", "cellkey"} {
		ts := startServer(t, mechanism, nil, nil)
		const sql = "SELECT COUNT(*) FROM people WHERE suburb = 'nowhere'"
		in, err := ts.engine.Query(context.Background(), testAnalyst, sql)
		if err != nil {
			t.Fatal(err)
		}
		if !in.Rows[0][0].Null || in.Notice == "" {
			t.Fatalf("%s in process: %+v, notice %q", mechanism, in.Rows, in.Notice)
		}
		for _, m := range modes {
			cfg, err := pgx.ParseConfig(ts.dsn(testAnalyst, testPassword))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = m.mode
			var mu sync.Mutex
			var notices []string
			cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
				mu.Lock()
				notices = append(notices, n.Message)
				mu.Unlock()
			}
			conn, err := pgx.ConnectConfig(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var n *int64
			if err := conn.QueryRow(context.Background(), sql).Scan(&n); err != nil {
				t.Fatalf("%s %s: %v", mechanism, m.name, err)
			}
			conn.Close(context.Background())
			mu.Lock()
			if n != nil || len(notices) != 1 || notices[0] != in.Notice {
				t.Errorf("%s %s: count %v, notices %q; want NULL and %q", mechanism, m.name, n, notices, in.Notice)
			}
			mu.Unlock()
		}
	}
}

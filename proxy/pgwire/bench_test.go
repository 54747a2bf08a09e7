package pgwire

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

const benchSQL = "SELECT COUNT(*) FROM people WHERE age BETWEEN 30 AND 49 AND sex = 'F'"

// BenchmarkWireVsInProcess compares a round trip over the wire (pgx, both
// protocols) with an in-process Engine call for the same query, in one run:
//
//	go test ./proxy/pgwire -run '^$' -bench WireVsInProcess -count 6 | benchstat -
func BenchmarkWireVsInProcess(b *testing.B) {
	ts := startServer(b, "cellkey", nil, nil)
	b.Run("in-process", func(b *testing.B) {
		s := ts.engine.NewSession(testAnalyst)
		for b.Loop() {
			if _, err := s.Exec(context.Background(), benchSQL, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, m := range modes[:2] {
		b.Run("wire-"+m.name, func(b *testing.B) {
			conn := ts.connect(b, m.mode)
			for b.Loop() {
				var n int64
				if err := conn.QueryRow(context.Background(), benchSQL).Scan(&n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWireThroughput runs the query from 1, 2, 4 and 8 concurrent
// clients; ns/op is wall time per query, so throughput is 1e9/ns_per_op.
func BenchmarkWireThroughput(b *testing.B) {
	ts := startServer(b, "cellkey", nil, nil)
	for _, clients := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("clients-%d", clients), func(b *testing.B) {
			conns := make([]*pgx.Conn, clients)
			for i := range conns {
				conns[i] = ts.connect(b, pgx.QueryExecModeCacheStatement)
			}
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N/clients + 1
			for _, conn := range conns {
				wg.Add(1)
				go func(conn *pgx.Conn) {
					defer wg.Done()
					for i := 0; i < per; i++ {
						var n int64
						if err := conn.QueryRow(context.Background(), benchSQL).Scan(&n); err != nil {
							b.Error(err)
							return
						}
					}
				}(conn)
			}
			wg.Wait()
		})
	}
}

// BenchmarkParameterisedQuery runs a query with three $n parameters in each
// of pgx's modes: simple (interpolated by the driver), extended (prepared
// once, then Bind and Execute per query) and extended-describe (Parse and
// Describe per query as well):
//
//	go test ./proxy/pgwire -run '^$' -bench ParameterisedQuery -count 6 | benchstat -
func BenchmarkParameterisedQuery(b *testing.B) {
	ts := startServer(b, "cellkey", nil, nil)
	const sql = "SELECT COUNT(*) FROM people WHERE age BETWEEN $1 AND $2 AND sex = $3"
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			conn := ts.connect(b, m.mode)
			for b.Loop() {
				var n int64
				if err := conn.QueryRow(context.Background(), sql, 30, 49, "F").Scan(&n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

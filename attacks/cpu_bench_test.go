package attacks_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"countwall/attacks"
	"countwall/proxy"
)

// reconStatements are the threshold counts idp-reconstruct sends to rebuild
// the small people table (k = 1), taken from its log against the simulated
// firewall, which asks what the Engine would be asked.
func reconStatements(b *testing.B) []string {
	b.Helper()
	var log bytes.Buffer
	f := peopleSim(b, "idp", map[string]any{"k": 1})
	if _, err := attacks.Execute(context.Background(), attacks.IDPReconstruct, &attacks.Logged{Querier: f, Log: &log}, allPeople(), ""); err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.HasPrefix(line, "SELECT COUNT(*) >") {
			out = append(out, line)
		}
	}
	if len(out) < 1000 {
		b.Fatalf("the reconstruction sent %d threshold counts", len(out))
	}
	return out
}

// BenchmarkReconstructionInProcess is the rate and the CPU of
// idp-reconstruct's threshold counts through an Engine session in process
// (idp, k = 1, an epsilon share of 1e-10 charged to the ledger, which
// reserves 1,000 queries' worth at a time), with each answer's audit row on
// disk before it leaves (audit.sync: full) and only in the state's log
// (normal). cpu-ns/op is the process's CPU time per statement, which other
// jobs on a shared machine inflate far less than the wall time.
func BenchmarkReconstructionInProcess(b *testing.B) {
	stmts := reconStatements(b)
	for _, auditSync := range []string{"full", "normal"} {
		b.Run("audit-"+auditSync, func(b *testing.B) {
			benchStatements(b, reconEngineWith(b, 1, auditSync, 1000), stmts)
		})
	}
}

// parallelSessions are how many sessions BenchmarkReconstructionParallel
// sends from at once, as `--parallel 4` and `--parallel 32` of the real
// attacks do.
var parallelSessions = []int{4, 32}

// BenchmarkReconstructionParallel is BenchmarkReconstructionInProcess with
// the statements sent from parallelSessions sessions of one analyst on one
// Engine at once, so that answers waiting for the audit's commit share it
// (group commit), as they do over the wire with --parallel.
func BenchmarkReconstructionParallel(b *testing.B) {
	stmts := reconStatements(b)
	for _, n := range parallelSessions {
		for _, auditSync := range []string{"full", "normal"} {
			b.Run(fmt.Sprintf("sessions-%d/audit-%s", n, auditSync), func(b *testing.B) {
				benchSessions(b, openReconEngine(b, 1, auditSync, 1000), n, stmts)
			})
		}
	}
}

// benchSessions sends b.N of stmts, in turn, from n sessions of one
// analyst on e at once, and reports what benchStatements reports.
func benchSessions(b *testing.B, e *proxy.Engine, n int, stmts []string) {
	ctx := context.Background()
	sessions := make([]*proxy.Session, n)
	for i := range sessions {
		sessions[i] = e.NewSession("mallory")
		defer sessions[i].Close()
	}
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu := startCPU()
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
				if _, err := s.Exec(ctx, stmts[i%int64(len(stmts))], nil); err != nil {
					failed.Store(&err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	cpu.report(b)
}

package attacks_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"countwall/attacks"
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

package proxy

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"countwall/config"
	"countwall/proxy/state"
)

// TestAuditSurvivesSIGKILL: a child process answers queries in a loop and
// prints "answered" only after each answer is returned; the parent kills it
// with SIGKILL at a random (seeded) point and then counts the answered rows
// in the audit log, which must cover every answer it read. Run for a
// mechanism without a charge, and for laplace charging every query and
// reserving ten at a time; and with audit.sync normal, whose promise is
// exactly this (a kill of countwall loses no row; only a power loss may).
func TestAuditSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: child processes killed at seeded points: skipped under -short; go test ./... runs it")
	}
	f := newFixture(t, 200)
	for _, tc := range []struct {
		mechanism string
		reserve   int
		auditSync string
	}{{"exact", 1, "full"}, {"laplace", 1, "full"}, {"laplace", 10, "full"}, {"exact", 1, "normal"}, {"laplace", 10, "normal"}} {
		t.Run(fmt.Sprintf("%s reserve=%d audit.sync=%s", tc.mechanism, tc.reserve, tc.auditSync), func(t *testing.T) {
			statePath := filepath.Join(t.TempDir(), "state.db")
			cfgPath := filepath.Join(t.TempDir(), "countwall.yaml")
			body := fmt.Sprintf("database: %s\nstate: %s\naudit: {sync: %s}\nmechanism: {name: %s}\nbudget: {epsilon_cap: 1000000, reserve: %d}\ntables: {people: {privacy_unit: id}}\n",
				f.database, statePath, tc.auditSync, tc.mechanism, tc.reserve)
			if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, uint64(tc.reserve)))
			received := 0
			for round := 0; round < 6; round++ {
				cmd := exec.Command(os.Args[0], "-test.run=^TestAuditChildProcess$", "-test.count=1")
				cmd.Env = append(os.Environ(), "AUDIT_CHILD_CONFIG="+cfgPath)
				cmd.Stderr = os.Stderr
				stdout, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				sc := bufio.NewScanner(stdout)
				killAfter := 1 + rng.IntN(30)
				for lines := 0; lines < killAfter && sc.Scan(); lines++ {
					received++
				}
				time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				for sc.Scan() { // answers printed before the kill
					received++
				}
				cmd.Wait() //nolint:errcheck // killed on purpose
				st, err := state.Open(context.Background(), statePath, state.Options{})
				if err != nil {
					t.Fatal(err)
				}
				log, err := st.ListAudit(context.Background(), state.AuditFilter{Analyst: "carol"})
				st.Close()
				if err != nil {
					t.Fatal(err)
				}
				answered := 0
				for _, e := range log {
					if e.Outcome == state.OutcomeAnswered {
						answered++
					}
				}
				if answered < received {
					t.Fatalf("round %d: the audit shows %d answers, the client received %d", round, answered, received)
				}
				t.Logf("round %d: received %d, audited %d", round, received, answered)
			}
			if received == 0 {
				t.Error("no child answered anything: the test tested nothing")
			}
		})
	}
}

// TestAuditChildProcess is the child of TestAuditSurvivesSIGKILL; run on
// its own it does nothing.
func TestAuditChildProcess(t *testing.T) {
	path := os.Getenv("AUDIT_CHILD_CONFIG")
	if path == "" {
		return
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	e, err := Open(context.Background(), cfg, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	// Killed by the parent; the bound only stops a runaway child.
	for i := 0; i < 100000; i++ {
		if _, err := e.Query(context.Background(), "carol", fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age > %d", i%50)); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		fmt.Println("answered")
	}
	os.Exit(0)
}

// TestAuditFingerprintIsKeyedEverywhere: the fingerprint written to the
// audit log (for a refusal, whose text is not kept) and to the ledger is
// the HMAC with this firewall's secret, not the unkeyed SHA-256 prefix
// anyone could compute from a guessed query. The answered statement's
// audit row records the statement instead and no fingerprint.
func TestAuditFingerprintIsKeyedEverywhere(t *testing.T) {
	f := newFixture(t, 50)
	e := f.open(t, "laplace", nil)
	ctx := context.Background()
	const q = "SELECT COUNT(*) FROM people WHERE sex = 'F'"
	const refusedQ = "DELETE FROM people"
	if _, err := e.Query(ctx, "alice", q); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Query(ctx, "alice", refusedQ); err == nil {
		t.Fatalf("%s was answered", refusedQ)
	}
	want := state.Fingerprint(e.state.Secret(), q)
	wantRefused := state.Fingerprint(e.state.Secret(), refusedQ)
	for sql, fp := range map[string]string{q: want, refusedQ: wantRefused} {
		if unkeyed := sha256.Sum256([]byte(sql)); fp == hex.EncodeToString(unkeyed[:8]) {
			t.Fatalf("the keyed fingerprint of %s equals the unkeyed one", sql)
		}
	}
	log, err := e.AuditLog(ctx, state.AuditFilter{Analyst: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 {
		t.Fatalf("audit = %+v, want two entries", log)
	}
	if a := log[0]; a.Fingerprint != "" || a.Release().Statement() != "select count(*) from people where sex = 'F'" || a.ChargeKind != "dp" || a.Epsilon != 0.1 {
		t.Errorf("answered entry %+v, want no fingerprint, its statement and a dp 0.1 charge", a)
	}
	if r := log[1]; r.Outcome != state.OutcomeRefused || r.Fingerprint != wantRefused || r.Shape != "" {
		t.Errorf("refused entry %+v, want fingerprint %s and no statement", r, wantRefused)
	}
	var ledgerFP string
	if err := e.state.SQL().QueryRowContext(ctx, `SELECT fingerprint FROM ledger WHERE analyst = 'alice'`).Scan(&ledgerFP); err != nil {
		t.Fatal(err)
	}
	if ledgerFP != want {
		t.Errorf("ledger fingerprint %s, want %s", ledgerFP, want)
	}
}

package main

import (
	"context"
	"errors"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"countwall/dataset/pgcopy"
	"countwall/internal/pgtest"
	"countwall/mechanisms"
	"countwall/proxy/state"
)

// TestPostgresServeInstancesShareOneBudget is the scale-out check: three
// `countwall serve` processes front one PostgreSQL store and share one
// PostgreSQL state; eight sessions of one analyst, spread over them, ask
// laplace counts (epsilon 0.1 each, cap 2) until refused, and one instance
// is killed with SIGKILL once five answers are out. The answers received
// never exceed the cap (20), the survivors' sessions reach it (53400), and
// the ledger's total is never below what the analyst received.
func TestPostgresServeInstancesShareOneBudget(t *testing.T) {
	srv := pgtest.Server(t)
	storeURL, stateURL := srv.NewDatabase(t), srv.NewDatabase(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "people.db")
	if out, err := run(t, "", "gen", "people", "--rows", "2000", "--out", db); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	if _, err := pgcopy.Table(context.Background(), db, "people", storeURL); err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("examples/countwall.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.NewReplacer(
		"database: demo.db", "database: "+storeURL,
		"state: countwall-state.db", "state: "+stateURL,
		"  name: cellkey", "  name: laplace",
		"  epsilon_cap: 1\n", "  epsilon_cap: 1\n  reserve: 2\n",
	).Replace(string(example))
	cfgPath := filepath.Join(dir, "countwall.yaml")
	if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}

	const instances, sessions = 3, 8
	addrs := make([]string, instances)
	cmds := make([]*exec.Cmd, instances)
	logs := make([]*strings.Builder, instances)
	for i := range instances {
		addrs[i] = freePort(t)
		cmds[i] = exec.Command(countwallBinary(t), "serve", "--config", cfgPath, "--server.listen", addrs[i])
		logs[i] = &strings.Builder{}
		cmds[i].Stdout, cmds[i].Stderr = logs[i], logs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
		cmd := cmds[i]
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt) //nolint:errcheck // may be dead already
			cmd.Wait()                       //nolint:errcheck // exit status is not the point
		})
	}
	ctx := context.Background()
	dsn := func(addr string) string {
		return (&url.URL{Scheme: "postgres", User: url.UserPassword("alice", "alice-secret"), Host: addr,
			Path: "/countwall", RawQuery: "sslmode=disable"}).String()
	}
	conns := make([]*pgx.Conn, sessions)
	for s := range sessions {
		addr := addrs[s%instances]
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if conns[s], err = pgx.Connect(ctx, dsn(addr)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("instance %d did not come up: %v\n%s", s%instances, err, logs[s%instances].String())
			}
		}
	}

	var answered, exhausted, lost atomic.Int64
	var killOnce sync.Once
	kill := func() {
		killOnce.Do(func() {
			if err := cmds[0].Process.Signal(syscall.SIGKILL); err != nil {
				t.Error(err)
			}
		})
	}
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conns[s].Close(context.Background())
			for {
				var n float64
				err := conns[s].QueryRow(ctx, "SELECT COUNT(*) FROM people").Scan(&n)
				var pe *pgconn.PgError
				switch {
				case err == nil:
					if answered.Add(1) == 5 {
						kill()
					}
				case errors.As(err, &pe) && pe.Code == "53400":
					exhausted.Add(1)
					return
				case s%instances == 0:
					lost.Add(1) // the killed instance's sessions end here
					return
				default:
					t.Errorf("session %d: %v", s, err)
					return
				}
			}
		}()
	}
	wg.Wait()

	got := answered.Load()
	t.Logf("%d answers, %d sessions refused at the cap, %d lost with the killed instance", got, exhausted.Load(), lost.Load())
	if float64(got)*0.1 > 2+1e-9 {
		t.Errorf("%d answers of epsilon 0.1 overspend alice's cap of 2", got)
	}
	if exhausted.Load() == 0 {
		t.Error("no session reached the cap: the race did not run to the end")
	}
	if lost.Load() == 0 {
		t.Error("no session was on the killed instance when it died")
	}

	// The ledger as any instance now reads it.
	st, err := state.Open(ctx, stateURL, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := state.OpenLedger(ctx, st.SQL(), state.LedgerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := l.Balances(ctx, "alice", state.Unlimited())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.Kind != mechanisms.AccountingDP {
			continue
		}
		t.Logf("ledger: alice spent dp epsilon %.4g", b.EpsilonSpent)
		if b.EpsilonSpent < float64(got)*0.1-1e-9 {
			t.Errorf("the ledger shows %.4g spent, the analyst received %d answers worth %.4g", b.EpsilonSpent, got, float64(got)*0.1)
		}
		if b.EpsilonSpent > 2+1e-9 || math.IsNaN(b.EpsilonSpent) {
			t.Errorf("the ledger shows %.4g spent, over the cap of 2", b.EpsilonSpent)
		}
	}
}

package state

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"countwall/ir"
	"countwall/mechanisms"
	"countwall/pgerror"
)

const dp = ir.AccountingDP

// openStateDB opens a state database the way proxy/statedb does.
func openStateDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	if IsPostgresURL(path) {
		db, err := openPostgres(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(20000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openLedger(t testing.TB, path string, reserve int) *Ledger {
	t.Helper()
	l, err := OpenLedger(context.Background(), openStateDB(t, path), LedgerOptions{Reserve: reserve})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func isExhausted(err error) bool {
	var pe *pgerror.Error
	return errors.As(err, &pe) && pe.Code == pgerror.ConfigurationLimitExceeded
}

// durableSpent reads the spent total as a fresh process would see it.
func durableSpent(t testing.TB, path, analyst string, kind ir.Accounting) (eps, delta float64) {
	t.Helper()
	l := openLedger(t, path, 1)
	bs, err := l.Balances(context.Background(), analyst, Unlimited())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.Kind == kind {
			return b.EpsilonSpent, b.DeltaSpent
		}
	}
	t.Fatalf("no %s balance", kind)
	return 0, 0
}

// countCharges reads how many charges the history holds for analyst, and their epsilon.
func countCharges(t testing.TB, path, analyst string) (n int, eps float64) {
	t.Helper()
	db := openStateDB(t, path)
	if err := db.QueryRow(`SELECT coalesce(sum(charges), 0), coalesce(sum(epsilon), 0) FROM ledger WHERE analyst = ?`, analyst).Scan(&n, &eps); err != nil {
		t.Fatal(err)
	}
	return n, eps
}

func TestLedgerCapsKindsGrantsReset(t *testing.T) {
	ctx := context.Background()
	for _, reserve := range []int{1, 10} {
		t.Run(fmt.Sprintf("reserve=%d", reserve), func(t *testing.T) {
			path := newStatePath(t)
			l := openLedger(t, path, reserve)
			caps := Caps{Epsilon: 1, Delta: 1e-5}
			charge := func(kind ir.Accounting, eps, delta float64) (Balance, error) {
				return l.Charge(ctx, Entry{Analyst: "bob", Mechanism: "laplace", Kind: kind, Epsilon: eps, Delta: delta, Fingerprint: "f1"}, caps)
			}
			// Ten charges of 0.1 meet the cap of 1 exactly (float rounding
			// tolerated); the eleventh is refused and not charged.
			for i := 0; i < 10; i++ {
				if _, err := charge(dp, 0.1, 0); err != nil {
					t.Fatalf("charge %d: %v", i, err)
				}
			}
			_, err := charge(dp, 0.1, 0)
			if !isExhausted(err) {
				t.Fatalf("11th charge: %v, want budget exhausted", err)
			}
			want := `privacy budget exhausted for analyst "bob": dp epsilon spent 1 of 1, this query needs 0.1`
			if err.Error() != want {
				t.Errorf("message %q, want %q", err.Error(), want)
			}
			// Kinds are apart: idp has its own total.
			b, err := charge(ir.AccountingIDP, 0.5, 0)
			if err != nil || b.EpsilonSpent != 0.5 || b.Kind != ir.AccountingIDP {
				t.Fatalf("idp charge: %+v, %v", b, err)
			}
			// Delta has its own cap.
			if _, err := charge(ir.AccountingBDP, 0.1, 2e-5); !isExhausted(err) {
				t.Errorf("delta over cap: %v", err)
			}
			// A grant raises the cap of its kind only.
			if err := l.Grant(ctx, "bob", dp, 0.25, 0); err != nil {
				t.Fatal(err)
			}
			b, err = charge(dp, 0.2, 0)
			if err != nil || math.Abs(b.EpsilonSpent-1.2) > 1e-12 || b.EpsilonCap != 1.25 {
				t.Fatalf("after grant: %+v, %v", b, err)
			}
			if _, err := charge(dp, 0.1, 0); !isExhausted(err) {
				t.Errorf("over the granted cap: %v", err)
			}
			bs, err := l.Balances(ctx, "bob", caps)
			if err != nil {
				t.Fatal(err)
			}
			if len(bs) != 3 || math.Abs(bs[0].EpsilonSpent-1.2) > 1e-12 || bs[1].EpsilonSpent != 0.5 || bs[2].EpsilonSpent != 0 {
				t.Errorf("balances %+v", bs)
			}
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
			// Durably: spent equals the answered charges; every answer has a row.
			if eps, _ := durableSpent(t, path, "bob", dp); math.Abs(eps-1.2) > 1e-12 {
				t.Errorf("durable dp spent %v, want 1.2", eps)
			}
			if n, sum := countCharges(t, path, "bob"); n != 12 || math.Abs(sum-1.7) > 1e-12 {
				t.Errorf("%d charges in the history summing to %v, want 12 summing to 1.7", n, sum)
			}
			list, err := l.List(ctx, nil)
			if err != nil || len(list) != 2 || !math.IsNaN(list[0].EpsilonCap) {
				t.Errorf("List: %+v, %v", list, err)
			}
			// Reset clears spending and grants, keeps the history.
			if err := l.Reset(ctx, "bob"); err != nil {
				t.Fatal(err)
			}
			if b, err := charge(dp, 1, 0); err != nil || b.EpsilonSpent != 1 || b.EpsilonCap != 1 {
				t.Errorf("after reset: %+v, %v", b, err)
			}
			if n, _ := countCharges(t, path, "bob"); n < 12 {
				t.Errorf("reset lost history: %d rows, want at least the 12 answered before it", n)
			}
		})
	}
}

func TestLedgerRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	l := openLedger(t, filepath.Join(t.TempDir(), "s.db"), 1)
	bad := []struct {
		e    Entry
		caps Caps
	}{
		{Entry{Kind: dp, Epsilon: 0.1}, Unlimited()},
		{Entry{Analyst: "a", Kind: "sdp", Epsilon: 0.1}, Unlimited()},
		{Entry{Analyst: "a", Kind: dp, Epsilon: -0.1}, Unlimited()},
		{Entry{Analyst: "a", Kind: dp, Epsilon: math.NaN()}, Unlimited()},
		{Entry{Analyst: "a", Kind: dp, Epsilon: math.Inf(1)}, Unlimited()},
		{Entry{Analyst: "a", Kind: dp, Epsilon: 0.1}, Caps{Epsilon: math.NaN()}},
		{Entry{Analyst: "a", Kind: dp, Epsilon: 0.1}, Caps{Epsilon: -1}},
	}
	for _, c := range bad {
		if _, err := l.Charge(ctx, c.e, c.caps); err == nil || isExhausted(err) {
			t.Errorf("Charge(%+v, %+v): %v, want a validation error", c.e, c.caps, err)
		}
	}
	// A zero cap allows nothing; a charge with no accounting is recorded
	// without a cap check.
	if _, err := l.Charge(ctx, Entry{Analyst: "a", Kind: dp, Epsilon: 0.1}, Caps{}); !isExhausted(err) {
		t.Errorf("zero cap: %v", err)
	}
	if _, err := l.Charge(ctx, Entry{Analyst: "a", Mechanism: "exact"}, Caps{}); err != nil {
		t.Errorf("no accounting: %v", err)
	}
	for _, g := range []struct {
		kind       ir.Accounting
		eps, delta float64
	}{{"", 1, 0}, {dp, 0, 0}, {dp, -1, 0}, {dp, math.Inf(1), 0}} {
		if err := l.Grant(ctx, "a", g.kind, g.eps, g.delta); err == nil {
			t.Errorf("Grant(%q, %v, %v) accepted", g.kind, g.eps, g.delta)
		}
	}
	// A database that would not keep commits through a crash is refused.
	loose, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "loose.db")+"?_pragma=synchronous(OFF)")
	if err != nil {
		t.Fatal(err)
	}
	defer loose.Close()
	if _, err := OpenLedger(ctx, loose, LedgerOptions{}); err == nil {
		t.Error("Open accepted a database without WAL and synchronous=FULL")
	}
}

// Eight sessions of one analyst race past the cap: exactly as many charges
// succeed as fit (33 of 0.03 in a cap of 1), refused ones are not charged.
func TestLedgerRaceGoroutines(t *testing.T) {
	for _, reserve := range []int{1, 10} {
		t.Run(fmt.Sprintf("reserve=%d", reserve), func(t *testing.T) {
			path := newStatePath(t)
			l := openLedger(t, path, reserve)
			ok := raceCharges(t, l, "dave", 8)
			if err := l.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if ok != 33 {
				t.Errorf("%d charges succeeded, want 33", ok)
			}
			checkRaceTotals(t, path, "dave", ok)
		})
	}
}

// raceCharges runs n goroutines charging 0.03 against a cap of 1 until
// each is refused, and returns the number of successful charges.
func raceCharges(t testing.TB, l *Ledger, analyst string, n int) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, err := l.Charge(context.Background(), Entry{Analyst: analyst, Mechanism: "laplace", Kind: dp, Epsilon: 0.03}, Caps{Epsilon: 1})
				if isExhausted(err) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ok
}

func checkRaceTotals(t *testing.T, path, analyst string, ok int) {
	t.Helper()
	if float64(ok)*0.03 > 1+1e-9 {
		t.Errorf("%d charges of 0.03 overspend a cap of 1", ok)
	}
	eps, _ := durableSpent(t, path, analyst, dp)
	if math.Abs(eps-float64(ok)*0.03) > 1e-9 {
		t.Errorf("durable spent %v, want %d * 0.03 (refused charges must not count)", eps, ok)
	}
	if n, sum := countCharges(t, path, analyst); n != ok || math.Abs(sum-eps) > 1e-9 {
		t.Errorf("%d charges in the history summing to %v, want %d summing to %v", n, sum, ok, eps)
	}
}

// Two processes, four sessions each, race for one analyst's budget.
func TestLedgerRaceProcesses(t *testing.T) {
	for _, reserve := range []int{1, 10} {
		t.Run(fmt.Sprintf("reserve=%d", reserve), func(t *testing.T) {
			path := newStatePath(t)
			openLedger(t, path, 1) // create the tables before the race
			var cmds []*exec.Cmd
			var outs []*strings.Builder
			for i := 0; i < 2; i++ {
				cmd := childCommand("race", path, reserve, 0)
				out := &strings.Builder{}
				cmd.Stdout, cmd.Stderr = out, os.Stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds, outs = append(cmds, cmd), append(outs, out)
			}
			total := 0
			for i, cmd := range cmds {
				if err := cmd.Wait(); err != nil {
					t.Fatalf("child %d: %v", i, err)
				}
				n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(outs[i].String()), "ok "))
				if err != nil {
					t.Fatalf("child %d said %q", i, outs[i].String())
				}
				total += n
			}
			if reserve == 1 && total != 33 {
				t.Errorf("%d charges succeeded, want 33", total)
			}
			checkRaceTotals(t, path, "erin", total)
		})
	}
}

// The crash test. A child process charges queries in a loop (epsilon under
// laplace, rho under gaussian) and prints "answered <amount>" only after
// each Charge has returned; the parent kills it with SIGKILL at a random
// (seeded) point, 20 times, and after each restart checks that the durable
// spent total covers every answer it read.
func TestLedgerCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: a child process killed 20 times at seeded points: skipped under -short; go test ./... runs it")
	}
	for _, job := range []string{"crash", "crash-rho"} {
		for _, reserve := range []int{1, 10} {
			t.Run(fmt.Sprintf("%s/reserve=%d", job, reserve), func(t *testing.T) { crashRounds(t, job, reserve) })
		}
	}
}

// crashRounds kills a child doing job 20 times.
func crashRounds(t *testing.T, job string, reserve int) {
	path := newStatePath(t)
	openLedger(t, path, 1)
	rng := rand.New(rand.NewPCG(42, uint64(reserve)))
	answered := 0.0
	for round := 0; round < 20; round++ {
		cmd := childCommand(job, path, reserve, round)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := rng.IntN(40)
		sc := bufio.NewScanner(stdout)
		lines := 0
		for lines < killAfter && sc.Scan() {
			answered += parseAnswered(t, sc.Text())
			lines++
		}
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() { // answers written before the kill
			answered += parseAnswered(t, sc.Text())
			lines++
		}
		cmd.Wait()
		spent := durableRho(t, path, "carol")
		if job == "crash" {
			spent, _ = durableSpent(t, path, "carol", dp)
		}
		if spent < answered*(1-1e-12) {
			t.Fatalf("round %d: ledger shows %v spent, the client received answers worth %v", round, spent, answered)
		}
		t.Logf("round %d: killed after %d answers; answered %.4f, ledger %.4f", round, lines, answered, spent)
	}
	if answered == 0 {
		t.Error("no child answered anything: the test tested nothing")
	}
}

// durableRho reads the rho spent as a fresh process would see it.
func durableRho(t testing.TB, path, analyst string) float64 {
	t.Helper()
	b, err := openLedger(t, path, 1).BalanceOf(context.Background(), analyst, dp, Unlimited())
	if err != nil {
		t.Fatal(err)
	}
	return b.RhoSpent
}

func parseAnswered(t *testing.T, line string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimPrefix(line, "answered "), 64)
	if err != nil {
		t.Fatalf("child printed %q", line)
	}
	return v
}

// childCommand re-runs this test binary as a child doing one job.
func childCommand(job, path string, reserve, round int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLedgerChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LEDGER_CHILD="+job, "LEDGER_DB="+path,
		"LEDGER_RESERVE="+strconv.Itoa(reserve), "LEDGER_ROUND="+strconv.Itoa(round))
	return cmd
}

// TestLedgerChildProcess is the child of the crash and race tests; run on
// its own it does nothing.
func TestLedgerChildProcess(t *testing.T) {
	job := os.Getenv("LEDGER_CHILD")
	if job == "" {
		return
	}
	reserve, _ := strconv.Atoi(os.Getenv("LEDGER_RESERVE"))
	round, _ := strconv.Atoi(os.Getenv("LEDGER_ROUND"))
	l := openLedger(t, os.Getenv("LEDGER_DB"), reserve)
	switch job {
	case "crash", "crash-rho":
		// Killed by the parent; the loop bound only stops a runaway child.
		for i := 0; i < 100000; i++ {
			amount := 0.001 * float64(1+(i+round)%3)
			e := Entry{Analyst: "carol", Mechanism: "laplace", Kind: dp, Epsilon: amount, Fingerprint: "q"}
			if job == "crash-rho" {
				e.Mechanism, e.Epsilon, e.Rho = "gaussian", 0, amount
			}
			if _, err := l.Charge(context.Background(), e, Unlimited()); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				os.Exit(2)
			}
			fmt.Fprintf(os.Stdout, "answered %g\n", amount)
		}
	case "race":
		ok := raceCharges(t, l, "erin", 4)
		if err := l.Close(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		fmt.Printf("ok %d\n", ok)
	}
	os.Exit(0)
}

// Benchmarks: go test ./proxy/state -run '^$' -bench . -benchtime 2000x
func BenchmarkLedgerCharge(b *testing.B) {
	for _, reserve := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("reserve=%d", reserve), func(b *testing.B) {
			l := openLedger(b, filepath.Join(b.TempDir(), "state.db"), reserve)
			e := Entry{Analyst: "bench", Mechanism: "laplace", Kind: dp, Epsilon: 1e-6, Fingerprint: "f"}
			for b.Loop() {
				if _, err := l.Charge(context.Background(), e, Unlimited()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLaplaceAnswerAndCharge is one analyst's query rate under
// laplace with the real noise library, excluding SQL: the mechanism's
// answer plus the durable charge.
func BenchmarkLaplaceAnswerAndCharge(b *testing.B) {
	m, err := mechanisms.New("laplace", nil, mechanisms.Env{})
	if err != nil {
		b.Fatal(err)
	}
	req := &mechanisms.Request{Query: &ir.Query{Table: "people"}, Epsilon: 1e-6,
		Result: &ir.Result{Cells: []ir.Cell{{Count: 1234, InDomain: true}}, Bounds: ir.DefaultBounds()}}
	for _, reserve := range []int{1, 10} {
		b.Run(fmt.Sprintf("reserve=%d", reserve), func(b *testing.B) {
			l := openLedger(b, filepath.Join(b.TempDir(), "state.db"), reserve)
			for b.Loop() {
				_, charge, err := m.Answer(context.Background(), req)
				if err != nil {
					b.Fatal(err)
				}
				e := Entry{Analyst: "bench", Mechanism: "laplace", Kind: charge.Kind, Epsilon: charge.Epsilon, Fingerprint: "f"}
				if _, err := l.Charge(context.Background(), e, Unlimited()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

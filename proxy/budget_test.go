package proxy

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"countwall/config"
	"countwall/pgerror"
)

// Ten answers at the default share of 0.1 spend a cap of 1 exactly: each
// NOTICE and SHOW budget read the decimal figures (0 left, not 1.1e-16),
// and the eleventh is refused uncharged.
func TestBudgetIsChargedBeforeAnswersAndCapped(t *testing.T) {
	f := newFixture(t, 200)
	cfg := f.config(t, "laplace", nil)
	cfg.Budget.EpsilonCap = 1
	cfg.Analysts = map[string]config.Analyst{"alice": {EpsilonCap: 1, DeltaCap: 1e-5}}
	e, err := Open(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	s := e.NewSession("alice")
	for i := 1; i <= 10; i++ {
		res, err := s.Exec(ctx, "SELECT COUNT(*) FROM people WHERE sex = 'F'", nil)
		if err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		want := "charged epsilon 0.1 (dp); remaining epsilon " + strconv.FormatFloat(float64(10-i)/10, 'g', -1, 64) + " of 1"
		if res.Notice != want {
			t.Errorf("query %d notice = %q, want %q", i, res.Notice, want)
		}
	}
	_, err = s.Exec(ctx, "SELECT COUNT(*) FROM people WHERE sex = 'F'", nil)
	var pe *pgerror.Error
	if !errors.As(err, &pe) || pe.Code != pgerror.ConfigurationLimitExceeded || !strings.Contains(pe.Message, "dp epsilon spent 1 of 1, this query needs 0.1") {
		t.Fatalf("eleventh query error = %v, want SQLSTATE %s", err, pgerror.ConfigurationLimitExceeded)
	}
	res, err := s.Exec(ctx, "SHOW budget", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 || res.Rows[0][0].Text != "dp" {
		t.Fatalf("SHOW budget rows = %+v", res.Rows)
	}
	if spent, left := res.Rows[0][1].Float, res.Rows[0][2].Float; spent != 1 || left != 0 {
		t.Errorf("dp spent %v remaining %v, want 1 and 0 (the refused query is not charged)", spent, left)
	}
	// The metrics publish the same figure.
	spent, err := e.BudgetSpent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sp := range spent {
		if sp.Analyst == "alice" && sp.Kind == "dp" {
			found = true
			if sp.Epsilon != 1 {
				t.Errorf("countwall_budget_spent of alice, dp: %v, want 1", sp.Epsilon)
			}
		}
	}
	if !found {
		t.Errorf("no metric of alice's dp spending in %+v", spent)
	}
	// Another analyst has a budget of their own.
	if _, err := e.Query(ctx, "bob", "SELECT COUNT(*) FROM people"); err != nil {
		t.Errorf("bob: %v", err)
	}
}

func TestConcurrentSessionsOfOneAnalystCannotOverspend(t *testing.T) {
	f := newFixture(t, 100)
	cfg := f.config(t, "laplace", nil)
	cfg.Budget.EpsilonCap = 1
	e, err := Open(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var mu sync.Mutex
	answered, refused := 0, 0
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := e.NewSession("alice")
			for i := 0; i < 5; i++ {
				_, err := s.Exec(context.Background(), "SELECT COUNT(*) FROM people", nil)
				mu.Lock()
				if err == nil {
					answered++
				} else {
					refused++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// 40 queries at epsilon 0.1 against a cap of 1: exactly 10 fit.
	if answered != 10 || refused != 30 {
		t.Errorf("answered %d, refused %d; want 10 and 30", answered, refused)
	}
}

func TestFloatMechanismsDeclareFloatColumns(t *testing.T) {
	f := newFixture(t, 100)
	for _, mech := range []string{"idp", "bdp"} {
		e := f.open(t, mech, nil)
		s := e.NewSession("alice")
		for _, q := range []string{"SELECT COUNT(*) FROM people", "SELECT COUNT(*) > 10 FROM people"} {
			d, err := s.Describe(context.Background(), s.Prepare(q))
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Exec(context.Background(), q, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d.Columns[0].Type != ColumnFloat8 || res.Columns[0].Type != ColumnFloat8 {
				t.Errorf("%s %q: described %v, answered %v; want float8", mech, q, d.Columns, res.Columns)
			}
		}
	}
}

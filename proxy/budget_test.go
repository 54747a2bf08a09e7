package proxy

import (
	"context"
	"countwall/pgerror"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestBudgetIsChargedBeforeAnswersAndCapped(t *testing.T) {
	f := newFixture(t, 200)
	cfg := f.config(t, "laplace", nil)
	cfg.Budget.EpsilonCap = 0.3
	e, err := Open(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	s := e.NewSession("alice")
	for i := 1; i <= 3; i++ {
		res, err := s.Exec(ctx, "SELECT COUNT(*) FROM people WHERE sex = 'F'", nil)
		if err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		want := fmt.Sprintf("charged epsilon 0.1 (dp); remaining epsilon %.1f of 0.3", float64(3-i)/10)
		if got := roundNotice(res.Notice); got != want {
			t.Errorf("query %d notice = %q, want %q", i, got, want)
		}
	}
	_, err = s.Exec(ctx, "SELECT COUNT(*) FROM people WHERE sex = 'F'", nil)
	var pe *pgerror.Error
	if !errors.As(err, &pe) || pe.Code != pgerror.ConfigurationLimitExceeded {
		t.Fatalf("fourth query error = %v, want SQLSTATE %s", err, pgerror.ConfigurationLimitExceeded)
	}
	res, err := s.Exec(ctx, "SHOW budget", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 || res.Rows[0][0].Text != "dp" {
		t.Fatalf("SHOW budget rows = %+v", res.Rows)
	}
	if spent, left := res.Rows[0][1].Float, res.Rows[0][2].Float; spent < 0.3-1e-9 || spent > 0.3+1e-9 || left > 1e-9 {
		t.Errorf("dp spent %g remaining %g, want 0.3 and 0 (the refused query is not charged)", spent, left)
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

// roundNotice rounds the notice's remaining epsilon to one decimal, since
// 0.3-0.1-0.1 is not exactly 0.1 in floating point.
func roundNotice(n string) string {
	var charged, left, limit float64
	var kind string
	if _, err := fmt.Sscanf(n, "charged epsilon %g (%2s); remaining epsilon %g of %g", &charged, &kind, &left, &limit); err != nil {
		return n
	}
	return fmt.Sprintf("charged epsilon %g (%s); remaining epsilon %.1f of %g", charged, kind, left, limit)
}

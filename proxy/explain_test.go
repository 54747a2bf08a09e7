package proxy

import (
	"context"
	"math"
	"strings"
	"testing"

	"countwall/config"
	"countwall/ir"
	"countwall/mechanisms"
	"countwall/pgerror"
	"countwall/planner"
)

// forbiddenEngine is an Engine under mechanism whose backend fails the test
// when called.
func forbiddenEngine(t *testing.T, f *fixture, mechanism string, change func(*config.Config)) (*Engine, *forbiddenBackend) {
	t.Helper()
	f.state = t.TempDir() + "/state.db"
	cfg := f.config(t, mechanism, nil)
	if change != nil {
		change(cfg)
	}
	e, err := Open(context.Background(), cfg, Options{NoiseSeed: 1})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	forbidden := &forbiddenBackend{t: t}
	e.backend = forbidden
	return e, forbidden
}

// nothingSpent fails the test when alice has spent anything.
func nothingSpent(t *testing.T, e *Engine, what string) {
	t.Helper()
	bals, err := e.budget.Balances(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bals {
		if b.EpsilonSpent != 0 || b.DeltaSpent != 0 || b.RhoSpent != 0 {
			t.Fatalf("%s: charged %+v", what, b)
		}
	}
}

// TestExplainOfARefusedStatementIsRefusedTheSameWay: every refused query of
// TestRefusedStatementsNeverReadTheData, asked with EXPLAIN in front, is
// refused with the same SQLSTATE, without a read or a charge; so is EXPLAIN
// with options or of a statement that is not a query.
func TestExplainOfARefusedStatementIsRefusedTheSameWay(t *testing.T) {
	f := newFixture(t, 200)
	cases := 0
	for _, tc := range refusalsBeforeRead {
		if !strings.HasPrefix(tc.stmt, "SELECT") && !strings.HasPrefix(tc.stmt, "SELEC ") && !strings.HasPrefix(tc.stmt, "DELETE") {
			continue // SET and SHOW are not queries: EXPLAIN refuses them as such (below)
		}
		cases++
		t.Run(tc.name, func(t *testing.T) {
			e, forbidden := forbiddenEngine(t, f, tc.mechanism, tc.cfg)
			forbidden.stmt.Store("EXPLAIN " + tc.stmt)
			s := e.NewSession("alice")
			defer s.Close()
			for _, sql := range tc.setup {
				if _, err := s.Exec(context.Background(), sql, nil); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
			}
			_, err := s.Exec(context.Background(), "EXPLAIN "+tc.stmt, nil)
			if got := pgerror.SQLState(err); got != tc.code {
				t.Fatalf("EXPLAIN %s: SQLSTATE %q (%v), want %q", tc.stmt, got, err, tc.code)
			}
			nothingSpent(t, e, tc.stmt)
		})
	}
	if cases < 20 {
		t.Fatalf("only %d refusals were explained", cases)
	}
	e, _ := forbiddenEngine(t, f, "laplace", nil)
	s := e.NewSession("alice")
	defer s.Close()
	for sql, code := range map[string]pgerror.Code{
		"EXPLAIN ANALYZE SELECT COUNT(*) FROM people":       pgerror.FeatureNotSupported,
		"EXPLAIN (FORMAT JSON) SELECT COUNT(*) FROM people": pgerror.FeatureNotSupported,
		"EXPLAIN SET epsilon = 0.5":                         pgerror.FeatureNotSupported,
		"EXPLAIN SHOW budget":                               pgerror.FeatureNotSupported,
		"EXPLAIN":                                           pgerror.SyntaxError,
		"EXPLAIN;":                                          pgerror.SyntaxError,
		"explain /* nothing */ ;":                           pgerror.SyntaxError,
		"EXPLAIN EXPLAIN SELECT COUNT(*) FROM people":       pgerror.SyntaxError,
	} {
		_, err := s.Exec(context.Background(), sql, nil)
		if got := pgerror.SQLState(err); got != code {
			t.Errorf("%s: SQLSTATE %q (%v), want %q", sql, got, err, code)
		}
		if _, err := s.Describe(context.Background(), s.Prepare(sql)); pgerror.SQLState(err) != code {
			t.Errorf("Describe %s: %v, want SQLSTATE %q", sql, err, code)
		}
	}
	nothingSpent(t, e, "EXPLAIN with options")
}

// TestExplainReadsNothingAndChargesNothing: under every mechanism, EXPLAIN
// of an answerable query, over the simple and the extended protocol's path
// (Describe, then Exec with bound parameters), answers one text column
// named QUERY PLAN without calling the backend or charging anything.
func TestExplainReadsNothingAndChargesNothing(t *testing.T) {
	f := newFixture(t, 200)
	age := "40"
	for _, name := range mechanismsUnderTest() {
		t.Run(name, func(t *testing.T) {
			e, forbidden := forbiddenEngine(t, f, name, nil)
			s := e.NewSession("alice")
			defer s.Close()
			for _, stmt := range []struct {
				sql  string
				args []*string
			}{
				{"EXPLAIN SELECT sex, COUNT(*) FROM people WHERE age > 30 GROUP BY sex", nil},
				{"/* a comment */ explain SELECT COUNT(*) FROM people WHERE age > $1", []*string{&age}},
				{"EXPLAIN SELECT suburb, COUNT(*) FROM people GROUP BY suburb", nil},
			} {
				forbidden.stmt.Store(stmt.sql)
				d, err := s.Describe(context.Background(), s.Prepare(stmt.sql))
				if err != nil || len(d.Columns) != 1 || d.Columns[0] != planColumn || len(d.Params) != len(stmt.args) {
					t.Fatalf("Describe %s: %+v, %v", stmt.sql, d, err)
				}
				res, err := s.Exec(context.Background(), stmt.sql, stmt.args)
				if undeclaredRefused(name, stmt.sql) {
					// Described as a query is (its shape), refused when run.
					if pgerror.SQLState(err) != pgerror.FeatureNotSupported {
						t.Fatalf("%s: %v, want 0A000", stmt.sql, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", stmt.sql, err)
				}
				if len(res.Columns) != 1 || res.Columns[0] != planColumn || res.Tag != "EXPLAIN" || len(res.Rows) < 3 {
					t.Fatalf("%s: %+v", stmt.sql, res)
				}
				if first := res.Rows[0][0].Text; first != "Count on people under "+name {
					t.Fatalf("%s: first line %q", stmt.sql, first)
				}
			}
			if n := forbidden.calls.Load(); n != 0 {
				t.Fatalf("the backend was called %d times", n)
			}
			nothingSpent(t, e, name)
		})
	}
}

// undeclaredRefused: the mechanisms that neither drop low counts nor
// select partitions refuse a GROUP BY over a column without a domain.
func undeclaredRefused(mechanism, sql string) bool {
	if !strings.Contains(sql, "GROUP BY suburb") {
		return false
	}
	switch mechanism {
	case "layered", "laplace", "gaussian":
		return false
	}
	return true
}

// planLine is the text of the plan's line with the given label.
func planLine(t *testing.T, res *Result, label string) string {
	t.Helper()
	for _, r := range res.Rows {
		if text, ok := strings.CutPrefix(r[0].Text, "  "+label+": "); ok {
			return text
		}
	}
	t.Fatalf("no %q line in %v", label, rowsOf(res))
	return ""
}

// TestExplainStatesTheCostAndTheError: EXPLAIN's figures are those the
// query then meets: the charge at the session's share, the budget the
// ledger then shows (Preview against the real charge, for a pure charge,
// a zCDP one and a zCDP one with a partition selection's pure part, each
// after some spending), and the library's 95% interval of the noise.
func TestExplainStatesTheCostAndTheError(t *testing.T) {
	f := newFixture(t, 200)
	cases := []struct {
		mechanism string
		sql       string
		charge    string
		errorText string
	}{
		{"laplace", "SELECT COUNT(*) FROM people WHERE age > 30",
			"dp epsilon 0.5 at the session's share (epsilon 0.5, delta 1e-06)",
			"95% of counts within [-6, 6] of the truth"},
		{"laplace", "SELECT suburb, COUNT(*) FROM people GROUP BY suburb",
			"dp epsilon 0.5, delta 1e-06 at the session's share (epsilon 0.5, delta 1e-06)",
			"95% of counts within [-12, 12] of the truth"},
		{"gaussian", "SELECT sex, COUNT(*) FROM people GROUP BY sex", "dp rho ", ""},
		{"gaussian", "SELECT suburb, COUNT(*) FROM people GROUP BY suburb", "and epsilon 0.25, delta 5e-07 (partition selection)", ""},
	}
	for _, tc := range cases {
		t.Run(tc.mechanism+" "+tc.sql, func(t *testing.T) {
			f.state = t.TempDir() + "/state.db"
			e := f.open(t, tc.mechanism, nil)
			e.queueAnswerAudit = true
			s := e.NewSession("alice")
			defer s.Close()
			ctx := context.Background()
			for _, sql := range []string{"SET epsilon = 0.5", "SELECT COUNT(*) FROM people WHERE age > 50"} {
				if _, err := s.Exec(ctx, sql, nil); err != nil {
					t.Fatal(err)
				}
			}
			plan, err := s.Exec(ctx, "EXPLAIN "+tc.sql, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := planLine(t, plan, "Charge"); !strings.Contains(got, tc.charge) {
				t.Errorf("Charge: %q, want it to contain %q", got, tc.charge)
			}
			if tc.errorText != "" && !strings.HasPrefix(planLine(t, plan, "Expected error"), tc.errorText) {
				t.Errorf("Expected error: %q, want %q", planLine(t, plan, "Expected error"), tc.errorText)
			}
			rt := e.live.Load()
			stmt, err := planner.Parse(tc.sql, nil, rt.catalog)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.price(rt, stmt.(*ir.Query))
			if err != nil {
				t.Fatal(err)
			}
			_, preview, err := s.previewCharge(ctx, p.charge)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Exec(ctx, tc.sql, nil); err != nil {
				t.Fatal(err)
			}
			bals, err := e.budget.Balances(ctx, "alice")
			if err != nil {
				t.Fatal(err)
			}
			after := bals[0]
			if math.Abs(after.EpsilonSpent-preview.EpsilonSpent) > 1e-12 || math.Abs(after.DeltaSpent-preview.DeltaSpent) > 1e-18 {
				t.Errorf("EXPLAIN previewed epsilon %g delta %g; the ledger then showed %g and %g",
					preview.EpsilonSpent, preview.DeltaSpent, after.EpsilonSpent, after.DeltaSpent)
			}
		})
	}
}

// TestIntervalColumns: with SET countwall.confidence the answer carries
// ci_low and ci_high, in the description too, holding the truth under exact
// (a width of 0); without it, or after SET ... = off, they are gone; bad
// levels are refused with 22023.
func TestIntervalColumns(t *testing.T) {
	f := newFixture(t, 200)
	ctx := context.Background()
	for _, tc := range []struct {
		mechanism string
		sql       string
		null      bool // the mechanism states no interval for this answer
	}{
		{"exact", "SELECT sex, COUNT(*) FROM people GROUP BY sex", false},
		{"laplace", "SELECT sex, COUNT(*) FROM people GROUP BY sex", false},
		{"gaussian", "SELECT COUNT(*) FROM people WHERE age > 30", false},
		{"laplace", "SELECT COUNT(*) > 10 FROM people", true},
		{"idp", "SELECT COUNT(*) FROM people", true},
		{"cellkey", "SELECT COUNT(*) FROM people", true}, // D not published
	} {
		t.Run(tc.mechanism+" "+tc.sql, func(t *testing.T) {
			f.state = t.TempDir() + "/state.db"
			e := f.open(t, tc.mechanism, nil)
			s := e.NewSession("alice")
			defer s.Close()
			if _, err := s.Exec(ctx, "SET countwall.confidence = 0.95", nil); err != nil {
				t.Fatal(err)
			}
			d, err := s.Describe(ctx, s.Prepare(tc.sql))
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Exec(ctx, tc.sql, nil)
			if err != nil {
				t.Fatal(err)
			}
			n := len(res.Columns)
			if n < 3 || res.Columns[n-2].Name != "ci_low" || res.Columns[n-1].Name != "ci_high" || len(d.Columns) != n {
				t.Fatalf("columns %+v, described %+v", res.Columns, d.Columns)
			}
			for _, row := range res.Rows {
				lo, hi, answer := row[n-2], row[n-1], row[n-3]
				if lo.Null != tc.null || hi.Null != tc.null {
					t.Fatalf("row %+v: interval NULL %v, want %v", row, lo.Null, tc.null)
				}
				if !tc.null && !(lo.Float <= float64(answer.Int) && float64(answer.Int) <= hi.Float && lo.Float >= 0) {
					t.Fatalf("row %+v: the answer is outside its interval", row)
				}
				if tc.mechanism == "exact" && (lo.Float != hi.Float || lo.Float != float64(answer.Int)) {
					t.Fatalf("row %+v: exact answers have the interval [answer, answer]", row)
				}
			}
			show, err := s.Exec(ctx, "SHOW countwall.confidence", nil)
			if err != nil || show.Rows[0][0].Text != "0.95" {
				t.Fatalf("SHOW countwall.confidence: %+v, %v", show, err)
			}
			if _, err := s.Exec(ctx, "SET countwall.confidence = off", nil); err != nil {
				t.Fatal(err)
			}
			if res, err = s.Exec(ctx, tc.sql, nil); err != nil || len(res.Columns) != n-2 {
				t.Fatalf("after off: %+v, %v", res, err)
			}
		})
	}
	f.state = t.TempDir() + "/state.db"
	e := f.open(t, "exact", nil)
	s := e.NewSession("alice")
	defer s.Close()
	for _, v := range []string{"1", "0", "0.4", "1.5", "'0x1p-1'", "NaN", "9.5e-1", "lots"} {
		if _, err := s.Exec(ctx, "SET countwall.confidence = "+v, nil); pgerror.SQLState(err) != pgerror.InvalidParameterValue {
			t.Errorf("SET countwall.confidence = %s: %v, want 22023", v, err)
		}
	}
}

// TestIntervalsCoverTheTruthThroughTheEngine: under laplace and gaussian, the
// truth of each of the fixture's 60 age cells falls inside its 95% interval
// at the stated rate. 60 cells x 50 queries = 3,000 intervals per
// mechanism, drawn from the cells the Engine computed as the Engine
// answers (the coverage of a single answer is
// tested in mechanisms TestIntervalCoverage); the test fails when the
// Clopper-Pearson upper bound (alpha 1e-7, one-sided) of the coverage is
// below 0.95: a false-failure rate below 2e-7 for the two mechanisms.
func TestIntervalsCoverTheTruthThroughTheEngine(t *testing.T) {
	f := newFixture(t, 3000)
	const sql = "SELECT age, COUNT(*) FROM people GROUP BY age"
	for _, name := range []string{"laplace", "gaussian"} {
		t.Run(name, func(t *testing.T) {
			e := f.open(t, name, nil)
			rec := &recordingBackend{inner: e.backend}
			e.backend = rec
			s := e.NewSession("alice")
			defer s.Close()
			ctx := context.Background()
			if _, err := s.Exec(ctx, "SET countwall.confidence = 0.95", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Exec(ctx, sql, nil); err != nil {
				t.Fatal(err)
			}
			rt := e.live.Load()
			stmt, _ := planner.Parse(sql, nil, rt.catalog)
			q := stmt.(*ir.Query)
			eps, delta := s.share(rt)
			req := &mechanisms.Request{Query: q, Table: rt.catalog.Tables[q.Table], Bounds: rec.last.Bounds, Result: rec.last, Epsilon: eps, Delta: delta}
			inside, n := 0, 0
			for range 50 {
				answers, _, err := rt.mech.Answer(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				res := &Result{Rows: make([][]Value, len(answers))}
				s.addIntervals(rt, req, answers, res)
				for i, row := range res.Rows {
					truth := float64(rec.last.Cells[i].Count)
					n++
					if row[0].Float <= truth && truth <= row[1].Float {
						inside++
					}
				}
			}
			if _, hi := clopperPearson(inside, n, 1e-7); hi < 0.95 {
				t.Fatalf("%d of %d intervals held the truth: upper bound %g < 0.95", inside, n, hi)
			}
			t.Logf("%d of %d intervals held the truth (%.3f)", inside, n, float64(inside)/float64(n))
		})
	}
}

// EXPLAIN under laplace states the rows of a person a count keeps, where
// that bound comes from, and what it leaves out.
func TestExplainStatesTheRowsBound(t *testing.T) {
	f := newFixture(t, 50)
	tests := []struct {
		name       string
		tableBound int64
		params     map[string]any
		want       string
	}{
		{"the default", 0, nil, "C = 1 row of a person per cell (max_rows_per_unit, the default): a person's further rows are not counted, so COUNT(*) counts persons, not rows; G = 1 cell(s) per person (max_groups_per_unit)"},
		{"the table's", 3, nil, "C = 3 rows of a person per cell (the table's max_rows_per_unit): a person's rows beyond 3 are not counted; G = 1 cell(s) per person (max_groups_per_unit)"},
		{"the mechanism's", 3, map[string]any{"max_rows_per_unit": 2}, "C = 2 rows of a person per cell (the mechanism's max_rows_per_unit): a person's rows beyond 2 are not counted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.state = t.TempDir() + "/state.db"
			cfg := f.config(t, "laplace", tt.params)
			people := cfg.Tables["people"]
			people.Bounds.MaxRowsPerUnit = tt.tableBound
			cfg.Tables["people"] = people
			e, err := Open(context.Background(), cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			plan, err := e.Query(context.Background(), "alice", "EXPLAIN SELECT COUNT(*) FROM people")
			if err != nil {
				t.Fatal(err)
			}
			if got := planLine(t, plan, "Contribution bounds"); !strings.HasPrefix(got, tt.want) {
				t.Errorf("Contribution bounds: %q, want %q", got, tt.want)
			}
		})
	}
}

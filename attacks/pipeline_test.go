package attacks_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"countwall/attacks"
	"countwall/pgerror"
	"countwall/proxy"
)

// pipelineRun is one reconstruction through e, in process or over the
// wire, over parallel connections with pipeline searches on each.
func pipelineRun(t *testing.T, e *proxy.Engine, o attacks.Options, wire bool, parallel, pipeline int) parallelRun {
	t.Helper()
	var run parallelRun
	var mu sync.Mutex
	open := func() (attacks.Querier, func()) {
		s := e.NewSession("mallory")
		return attacks.InProcess{Session: s}, s.Close
	}
	if wire {
		dsn := serveWire(t, e, "tcp")
		open = func() (attacks.Querier, func()) {
			w := dialWire(t, dsn)
			return w, func() { w.Close() }
		}
	}
	o.Parallel, o.Pipeline = parallel, pipeline
	o.Reconnect = func(context.Context) (attacks.Querier, func(), error) {
		q, closeQ := open()
		return q, closeQ, nil
	}
	o.Progress = func(done, total int) {
		mu.Lock()
		run.progress = append(run.progress, [2]int{done, total})
		mu.Unlock()
	}
	first, closeFirst := open()
	defer closeFirst()
	log := &syncBuffer{}
	q := &attacks.Logged{Querier: first, Log: log}
	res, err := attacks.Execute(context.Background(), attacks.IDPReconstruct, q, o, reconPeople(t))
	if err != nil {
		t.Fatal(err)
	}
	run.res, run.log = res, log.String()
	return run
}

// sortedQueries is a log's queries (not its SET statements), sorted: the
// statements sent, whatever the order the connections and the searches
// sent them in.
func sortedQueries(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "SELECT ") {
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// With several searches in flight on each connection, in process and over
// the wire (pipelined Query messages), the reconstruction under exact
// sends the very statements of the sequential run, each once, gets the
// same answers (the same rows, in the same order) and counts the same
// queries per column, groups and progress; only the order of the
// statements in the log differs.
func TestIDPReconstructPipelinedIsTheSequentialRun(t *testing.T) {
	o := allPeople()
	o.Target.Where = "suburb IN ('suburb_0002', 'suburb_0003')"
	seq := pipelineRun(t, parallelEngine(t, "exact", 1), o, false, 1, 1)
	if seq.res.Recovered < 10 || !*seq.res.Exact || seq.res.Note != "" {
		t.Fatalf("sequential: recovered %d rows (exact %v), note %q", seq.res.Recovered, *seq.res.Exact, seq.res.Note)
	}
	_, seqRows := attacks.ReconstructedRows(seq.res)
	for _, tc := range []struct {
		name               string
		wire               bool
		parallel, pipeline int
	}{
		{"wire sequential", true, 1, 1},
		{"in process pipeline 8", false, 1, 8},
		{"wire pipeline 8", true, 1, 8},
		{"wire parallel 3 pipeline 5", true, 3, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := pipelineRun(t, parallelEngine(t, "exact", 1), o, tc.wire, tc.parallel, tc.pipeline)
			if _, rows := attacks.ReconstructedRows(run.res); !reflect.DeepEqual(rows, seqRows) {
				t.Errorf("rows %v, want %v", rows, seqRows)
			}
			if run.res.Queries != seq.res.Queries || run.res.Refused != 0 || !*run.res.Exact || run.res.Note != "" {
				t.Errorf("%d queries, %d refused (exact %v), note %q; sequential %d queries",
					run.res.Queries, run.res.Refused, *run.res.Exact, run.res.Note, seq.res.Queries)
			}
			for _, key := range []string{"queries", "queries_per_column", "groups_per_column", "domain_check_queries", "inconsistent_searches", "setup_queries"} {
				if !reflect.DeepEqual(run.res.Details[key], seq.res.Details[key]) {
					t.Errorf("%s %v, want %v", key, run.res.Details[key], seq.res.Details[key])
				}
			}
			if !reflect.DeepEqual(run.progress, seq.progress) {
				t.Errorf("progress differs from the sequential run's (%d reports, want %d)", len(run.progress), len(seq.progress))
			}
			got, want := sortedQueries(run.log), sortedQueries(seq.log)
			if !reflect.DeepEqual(got, want) || len(got) != run.res.Queries {
				t.Errorf("the log holds %d queries, the sequential run's %d, not the same statements", len(got), len(want))
			}
			if sets := strings.Count(run.log, "SET epsilon = 1e-10;"); sets != tc.parallel {
				t.Errorf("%d SET epsilon in the log, want one a connection", sets)
			}
		})
	}
}

// scriptQuerier answers each statement from a script, in order of
// arrival, and records what it was sent and in how many batches.
type scriptQuerier struct {
	sent    []string
	batches int
	refuse  map[string]error
}

func (s *scriptQuerier) Query(ctx context.Context, sql string) (*attacks.Rows, error) {
	s.sent = append(s.sent, sql)
	if err := s.refuse[sql]; err != nil {
		return nil, err
	}
	return &attacks.Rows{Columns: []string{"count"}, Values: [][]string{{"1"}}}, nil
}

func (s *scriptQuerier) QueryBatch(ctx context.Context, sqls []string) ([]*attacks.Rows, []error) {
	s.batches++
	rows, errs := make([]*attacks.Rows, len(sqls)), make([]error, len(sqls))
	for i, sql := range sqls {
		rows[i], errs[i] = s.Query(ctx, sql)
	}
	return rows, errs
}

// Logged counts, limits and logs a batch as it does one statement at a
// time: the statements within --max-queries are sent in one batch and
// logged in order, the rest answered with ErrQueryLimit unsent; a refusal
// for a spent budget within a batch is counted, and the next batch is
// answered with it unsent.
func TestLoggedBatchCountsLimitsAndStops(t *testing.T) {
	ctx := context.Background()
	inner := &scriptQuerier{}
	var log strings.Builder
	l := &attacks.Logged{Querier: inner, Log: &log, Max: 5}
	sqls := []string{"SELECT 1", "SELECT 2", "SELECT 3"}
	if _, errs := l.QueryBatch(ctx, sqls); errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Fatalf("first batch: %v", errs)
	}
	_, errs := l.QueryBatch(ctx, []string{"SELECT 4", "SELECT 5", "SELECT 6", "SELECT 7"})
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], attacks.ErrQueryLimit) || !errors.Is(errs[3], attacks.ErrQueryLimit) {
		t.Errorf("second batch: %v", errs)
	}
	wantSent := []string{"SELECT 1", "SELECT 2", "SELECT 3", "SELECT 4", "SELECT 5"}
	if !reflect.DeepEqual(inner.sent, wantSent) || inner.batches != 2 || l.Sent() != 5 {
		t.Errorf("sent %v in %d batches, counted %d", inner.sent, inner.batches, l.Sent())
	}
	if want := "SELECT 1;\nSELECT 2;\nSELECT 3;\nSELECT 4;\nSELECT 5;\n"; log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}

	budget := pgerror.Errorf(pgerror.ConfigurationLimitExceeded, "budget exhausted")
	inner = &scriptQuerier{refuse: map[string]error{"SELECT 2": budget}}
	l = &attacks.Logged{Querier: inner}
	_, errs = l.QueryBatch(ctx, sqls)
	if errs[0] != nil || !attacks.IsBudgetExhausted(errs[1]) || errs[2] != nil || l.Refused() != 1 || l.Sent() != 3 {
		t.Errorf("batch with a spent budget: %v, %d refused of %d", errs, l.Refused(), l.Sent())
	}
	_, errs = l.QueryBatch(ctx, []string{"SELECT 4"})
	if !attacks.IsBudgetExhausted(errs[0]) || len(inner.sent) != 3 || l.Sent() != 3 {
		t.Errorf("after the spent budget: %v, %d sent", errs, len(inner.sent))
	}
}

// The noise remover's statements do not depend on one another's answers:
// over the wire with 16 in flight it sends the statements of the sequential
// run in the same order, against cellkey (whose noise is keyed, so the
// same statement gets the same answer), and recovers the same histogram.
func TestNoiseRemoverPipelinedIsTheSequentialRun(t *testing.T) {
	ctx := context.Background()
	o := attacks.Options{Target: attacks.Target{Table: "synthetic"}, Column: "value", Values: attacks.IntRange(1, 40), K: 30, Seed: 1}
	run := func(pipeline int) (*attacks.Result, string) {
		e, _ := syntheticEngineOpen(t, "cellkey", "ptable: uniform, D: 2, suppress_at: 4", "full")
		var log strings.Builder
		q := &attacks.Logged{Querier: dialWire(t, serveWire(t, e, "tcp")), Log: &log}
		o.Pipeline = pipeline
		res, err := attacks.Execute(ctx, attacks.NoiseRemover, q, o, smallSynthetic(t))
		if err != nil {
			t.Fatal(err)
		}
		return res, log.String()
	}
	seq, seqLog := run(1)
	pipe, pipeLog := run(16)
	if pipeLog != seqLog || pipe.Queries != seq.Queries || seq.Queries < 1000 {
		t.Errorf("pipelined: %d queries, sequential %d; logs equal: %v", pipe.Queries, seq.Queries, pipeLog == seqLog)
	}
	if !reflect.DeepEqual(pipe.Histogram, seq.Histogram) || pipe.Recovered != seq.Recovered {
		t.Errorf("pipelined histogram %v, sequential %v", pipe.Histogram, seq.Histogram)
	}
}

// The variance test's m answers do not depend on one another: over the
// wire with 16 in flight against a seeded idp with plus_one it sends the
// statements of the sequential run, gets the same answers (the server
// draws its noise in the order the statements arrive) and so decides the
// same from the same psi.
func TestIDPVariancePipelinedIsTheSequentialRun(t *testing.T) {
	ctx := context.Background()
	const m = 200
	run := func(pipeline int) (*attacks.Result, string) {
		body := fmt.Sprintf(`database: %s
state: %s
mechanism: {name: idp}
mechanisms:
  idp: {k: 1, plus_one: true}
budget:
  epsilon: {default: 0.1, min: 1.0e-12, max: 1}
  epsilon_cap: 1
  reserve: 1000
tables:
  people:
    privacy_unit: id
`, targetsPeople(t), filepath.Join(t.TempDir(), "state.db"))
		e, _ := openSeededEngine(t, body, 11)
		var log strings.Builder
		q := &attacks.Logged{Querier: dialWire(t, serveWire(t, e, "tcp")), Log: &log}
		o := attacks.IDPVariance.Demo()
		o.M, o.Pipeline = m, pipeline
		res, err := attacks.Execute(ctx, attacks.IDPVariance, q, o, targetsPeople(t))
		if err != nil {
			t.Fatal(err)
		}
		return res, log.String()
	}
	seq, seqLog := run(1)
	pipe, pipeLog := run(16)
	if pipeLog != seqLog || pipe.Queries != seq.Queries || seq.Queries != m {
		t.Errorf("pipelined: %d queries, sequential %d, want %d; logs equal: %v", pipe.Queries, seq.Queries, m, pipeLog == seqLog)
	}
	if pipe.Details["psi"] != seq.Details["psi"] || pipe.Recovered != seq.Recovered || seq.Details["answers"] != m {
		t.Errorf("pipelined: psi %v deciding %d; sequential: psi %v deciding %d over %v answers",
			pipe.Details["psi"], pipe.Recovered, seq.Details["psi"], seq.Recovered, seq.Details["answers"])
	}
}

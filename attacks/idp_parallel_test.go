package attacks_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"countwall/attacks"
	"countwall/proxy"
)

// parallelEngine fronts the small people table in process under mechanism
// (idp at k = 1, or exact), with an idp epsilon cap.
func parallelEngine(t *testing.T, mechanism string, epsilonCap float64) *proxy.Engine {
	t.Helper()
	return peopleEngine(t, reconPeople(t), mechanism, epsilonCap, "full")
}

// peopleEngine fronts a people table at db in process under mechanism (idp
// at k = 1, or exact), with an idp epsilon cap and the audit's sync.
func peopleEngine(t *testing.T, db, mechanism string, epsilonCap float64, auditSync string) *proxy.Engine {
	t.Helper()
	dir := t.TempDir()
	body := fmt.Sprintf(`database: %s
state: %s
mechanism: {name: %s}
mechanisms:
  idp: {k: 1}
budget:
  epsilon: {default: 1.0e-10, min: 1.0e-12, max: 1}
  epsilon_cap: %g
  reserve: 100
audit: {sync: %s}
tables:
  people:
    privacy_unit: id
`, db, filepath.Join(dir, "state.db"), mechanism, epsilonCap, auditSync)
	e, _ := openEngine(t, body)
	return e
}

// syncBuffer is a log several connections write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// parallelRun is one reconstruction through e over parallel sessions of the
// same analyst, with its SQL log and the progress it reported.
type parallelRun struct {
	res      *attacks.Result
	log      string
	progress [][2]int
}

func runParallel(t *testing.T, e *proxy.Engine, o attacks.Options, parallel int) parallelRun {
	t.Helper()
	var run parallelRun
	var mu sync.Mutex
	o.Parallel = parallel
	o.Reconnect = func(context.Context) (attacks.Querier, func(), error) {
		s := e.NewSession("mallory")
		return attacks.InProcess{Session: s}, s.Close, nil
	}
	o.Progress = func(done, total int) {
		mu.Lock()
		run.progress = append(run.progress, [2]int{done, total})
		mu.Unlock()
	}
	log := &syncBuffer{}
	q := &attacks.Logged{Querier: attacks.InProcess{Session: e.NewSession("mallory")}, Log: log}
	res, err := attacks.Execute(context.Background(), attacks.IDPReconstruct, q, o, reconPeople(t))
	if err != nil {
		t.Fatal(err)
	}
	run.res, run.log = res, log.String()
	return run
}

// countStatements counts the log's queries (not its SET statements).
func countStatements(log string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "SELECT ") {
			n++
		}
	}
	return n
}

// Over 2 and 4 sessions of the same Engine, the reconstruction of the
// people living in three suburbs (every attribute) is the sequential one:
// the same rows in the same order, the same queries in total and per
// column, the same domain checks and the same progress reports, under idp
// (k = 1) and exact. The searches depend on the true counts alone, so the
// figures are deterministic whatever the sessions' timing; under idp each
// query is charged 1e-10, so the ledger's claim is the same too.
func TestIDPReconstructParallelIsTheSequentialRun(t *testing.T) {
	if testing.Short() {
		t.Skip("scale: the reconstruction over 1, 2 and 4 sessions: skipped under -short; go test ./... runs it")
	}
	for _, mechanism := range []string{"idp", "exact"} {
		t.Run(mechanism, func(t *testing.T) {
			o := allPeople()
			o.Target.Where = "suburb IN ('suburb_0002', 'suburb_0003')"
			seq := runParallel(t, parallelEngine(t, mechanism, 1), o, 1)
			if seq.res.Recovered < 10 || !*seq.res.Exact || seq.res.Note != "" {
				t.Fatalf("sequential: recovered %d rows (exact %v), note %q", seq.res.Recovered, *seq.res.Exact, seq.res.Note)
			}
			if _, ok := seq.res.Details["connections"]; ok {
				t.Errorf("a sequential run reports connections")
			}
			for _, parallel := range []int{2, 4} {
				par := runParallel(t, parallelEngine(t, mechanism, 1), o, parallel)
				_, seqRows := attacks.ReconstructedRows(seq.res)
				_, parRows := attacks.ReconstructedRows(par.res)
				if !reflect.DeepEqual(parRows, seqRows) {
					t.Errorf("parallel %d: rows %v, want %v", parallel, parRows, seqRows)
				}
				if par.res.Queries != seq.res.Queries || par.res.Recovered != seq.res.Recovered || !*par.res.Exact || par.res.Note != "" {
					t.Errorf("parallel %d: %d queries, %d rows (exact %v), note %q; sequential %d queries, %d rows",
						parallel, par.res.Queries, par.res.Recovered, *par.res.Exact, par.res.Note, seq.res.Queries, seq.res.Recovered)
				}
				for _, key := range []string{"queries", "queries_per_column", "groups_per_column", "domain_check_queries", "inconsistent_searches", "setup_queries", "target_size_queries", "target_rows"} {
					if !reflect.DeepEqual(par.res.Details[key], seq.res.Details[key]) {
						t.Errorf("parallel %d: %s %v, want %v", parallel, key, par.res.Details[key], seq.res.Details[key])
					}
				}
				if got := par.res.Details["connections"]; got != parallel {
					t.Errorf("parallel %d: connections %v", parallel, got)
				}
				if !reflect.DeepEqual(par.progress, seq.progress) {
					t.Errorf("parallel %d: progress differs from the sequential run's (%d reports, want %d)", parallel, len(par.progress), len(seq.progress))
				}
				// The log holds every query of every session, and a SET
				// epsilon for each session.
				if n := countStatements(par.log); n != par.res.Queries {
					t.Errorf("parallel %d: the log holds %d queries of %d", parallel, n, par.res.Queries)
				}
				if mechanism == "idp" {
					if sets := strings.Count(par.log, "SET epsilon = 1e-10;"); sets != parallel {
						t.Errorf("parallel %d: %d SET epsilon in the log", parallel, sets)
					}
					if want := float64(par.res.Queries) * 1e-10; math.Abs(par.res.Spent["idp"]-want) > want*1e-9 {
						t.Errorf("parallel %d: idp claims %g for %d queries, want %g", parallel, par.res.Spent["idp"], par.res.Queries, want)
					}
				}
			}
			t.Logf("%s: %d rows, %d queries", mechanism, seq.res.Recovered, seq.res.Queries)
		})
	}
}

// Under --parallel 4 the query limit is one limit for the four sessions:
// the attack stops at exactly 400 queries, all of them in the log, says so,
// and keeps the rows over the columns it completed, exact there. A budget
// cap stops it too: a refusal on one session stops the others, and the
// ledger never shows more than the cap.
func TestIDPReconstructParallelStops(t *testing.T) {
	o := allPeople()
	o.Target.Where = "suburb IN ('suburb_0002', 'suburb_0003')"
	o.MaxQueries = 400
	run := runParallel(t, parallelEngine(t, "idp", 1), o, 4)
	res := run.res
	cols, _ := attacks.ReconstructedRows(res)
	if res.Queries != 400 || countStatements(run.log) != 400 || !strings.Contains(res.Note, "stopped after 400 queries") || len(cols) == 0 || len(cols) == 10 {
		t.Fatalf("%d queries (%d logged), columns %v, note %q", res.Queries, countStatements(run.log), cols, res.Note)
	}
	if res.Recovered != *res.Truth || !*res.Exact {
		t.Errorf("over %v: recovered %d rows of %d, exact %v", cols, res.Recovered, *res.Truth, *res.Exact)
	}

	o.MaxQueries = 0
	run = runParallel(t, parallelEngine(t, "idp", 200e-10), o, 4)
	res = run.res
	cols, _ = attacks.ReconstructedRows(res)
	// Up to one refusal per session: each may have had a query in flight
	// when the first refusal came.
	if res.Refused < 1 || res.Refused > 4 || !strings.Contains(res.Note, "stopped after") || len(cols) == 10 {
		t.Fatalf("refused %d, columns %v, note %q", res.Refused, cols, res.Note)
	}
	if res.Spent["idp"] > 200e-10*(1+1e-9) {
		t.Errorf("spent %g past the cap", res.Spent["idp"])
	}
}

// --parallel is refused before any query when it is negative, or above 1
// without a way to reconnect.
func TestIDPReconstructParallelRefusals(t *testing.T) {
	for _, tc := range []struct {
		parallel int
		want     string
	}{
		{2, "--parallel 2 needs further connections to the firewall"},
		{-1, "--parallel -1: give at least 1 connection"},
	} {
		o := allPeople()
		o.Parallel = tc.parallel
		q := &attacks.Logged{Querier: attacks.InProcess{Session: parallelEngine(t, "idp", 1).NewSession("mallory")}}
		_, err := attacks.IDPReconstruct.Run(context.Background(), q, o)
		if err == nil || !strings.Contains(err.Error(), tc.want) || q.Sent() != 0 {
			t.Errorf("--parallel %d: err %v after %d queries, want %q", tc.parallel, err, q.Sent(), tc.want)
		}
	}
}

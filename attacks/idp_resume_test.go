package attacks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"countwall/attacks"
)

// cancelAfter cancels the run's context once n queries have been answered:
// an interrupt (Ctrl-C) in the middle of a run.
type cancelAfter struct {
	q      attacks.Querier
	n      int
	cancel context.CancelFunc

	mu   sync.Mutex
	seen int
}

func (c *cancelAfter) Query(ctx context.Context, sql string) (*attacks.Rows, error) {
	rows, err := c.q.Query(ctx, sql)
	c.mu.Lock()
	if c.seen++; c.seen == c.n {
		c.cancel()
	}
	c.mu.Unlock()
	return rows, err
}

// An interrupted reconstruction keeps the columns it completed, is still
// scored and read back, and says how to go on; resumed from its JSON, the
// run completes with the rows an uninterrupted run recovers, in fewer
// queries than that run.
func TestIDPReconstructResumesAfterAnInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("scale: an interrupted reconstruction and an uninterrupted one: skipped under -short; go test ./... runs it")
	}
	o := allPeople()
	o.Target.Where = "suburb = 'suburb_0003'"
	var stages []string
	o.Stage = func(s string) { stages = append(stages, s) }
	full, err := attacks.Execute(context.Background(), attacks.IDPReconstruct, reconEngine(t, 1), o, reconPeople(t))
	if err != nil {
		t.Fatal(err)
	}
	// The progress line names the column at work.
	if len(stages) != len(o.Domains) || stages[0] != "column 1 of 10 (sex)" || stages[9] != "column 10 of 10 (income)" {
		t.Errorf("stages %q", stages)
	}
	o.Stage = nil

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := reconEngine(t, 1)
	q.Querier = &cancelAfter{q: q.Querier, n: full.Queries / 2, cancel: cancel}
	part, err := attacks.Execute(ctx, attacks.IDPReconstruct, q, o, reconPeople(t))
	if err != nil {
		t.Fatalf("an interrupted run failed instead of keeping its work: %v", err)
	}
	cols, _ := attacks.ReconstructedRows(part)
	if len(cols) == 0 || len(cols) == len(o.Domains) || !strings.Contains(part.Note, "interrupted") || !strings.Contains(part.Note, "--resume") {
		t.Fatalf("interrupted run: columns %v, note %q", cols, part.Note)
	}
	if part.Refused != 0 || part.Spent == nil || part.Truth == nil || *part.Truth != *full.Truth {
		t.Errorf("interrupted run: %d refused, spent %v, truth %v: want no refusal, the budget read back and the score", part.Refused, part.Spent, part.Truth)
	}

	b, err := json.Marshal(part)
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "part.json")
	if err := os.WriteFile(saved, b, 0o600); err != nil {
		t.Fatal(err)
	}
	o.Params = &attacks.ReconstructParams{Resume: saved}
	resumed, err := attacks.Execute(context.Background(), attacks.IDPReconstruct, reconEngine(t, 1), o, reconPeople(t))
	if err != nil {
		t.Fatal(err)
	}
	_, wantRows := attacks.ReconstructedRows(full)
	gotCols, gotRows := attacks.ReconstructedRows(resumed)
	if len(gotCols) != len(o.Domains) || !reflect.DeepEqual(gotRows, wantRows) || !*resumed.Exact {
		t.Fatalf("resumed: columns %v, %d distinct rows (want %d), exact %v, note %q", gotCols, len(gotRows), len(wantRows), *resumed.Exact, resumed.Note)
	}
	// The column cut short kept the groups it had finished: what is asked
	// again is at most the group in flight at the interrupt, a small part
	// of the run (one group of this target costs well under 10%).
	t.Logf("whole run %d queries; interrupted after %d, resumed with %d more; note %q", full.Queries, part.Queries, resumed.Queries, part.Note)
	if resumed.Queries >= full.Queries || part.Queries+resumed.Queries > full.Queries+full.Queries/10 {
		t.Errorf("resumed after %d queries with %d more; the whole run took %d", part.Queries, resumed.Queries, full.Queries)
	}
	if _, ok := part.Details["partial_column"]; !ok || !strings.Contains(part.Note, "groups") {
		t.Errorf("the interrupted run kept nothing of the column it was in: note %q", part.Note)
	}
	if !strings.Contains(resumed.Note, "Resumed from "+saved) {
		t.Errorf("resumed note %q", resumed.Note)
	}

	// A resume of another target is refused, naming both.
	o.Target.Where = "suburb = 'suburb_0004'"
	if _, err := attacks.Execute(context.Background(), attacks.IDPReconstruct, reconEngine(t, 1), o, reconPeople(t)); err == nil || !strings.Contains(err.Error(), "give the same --table and --where") {
		t.Errorf("resume of another target: %v", err)
	}
}

// A result without a verdict carries no number for it in its JSON: every
// number, -1 included, may be a value of the domain attacked.
func TestUndecidedResultHasNoValue(t *testing.T) {
	for _, tc := range []struct {
		r    attacks.Result
		want []string
		bans []string
	}{
		{attacks.Result{Attack: "idp-attribute", Undecided: true}, []string{`"undecided":true`}, []string{`"recovered"`, `"estimate"`}},
		{attacks.Result{Attack: "idp-attribute", Recovered: -1, Estimate: -1}, []string{`"recovered":-1`, `"estimate":-1`}, []string{`"undecided"`}},
	} {
		b, err := json.Marshal(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %s", b, w)
			}
		}
		for _, w := range tc.bans {
			if strings.Contains(string(b), w) {
				t.Errorf("%s holds %s", b, w)
			}
		}
		var back attacks.Result
		if err := json.Unmarshal(b, &back); err != nil || back.Undecided != tc.r.Undecided || back.Recovered != tc.r.Recovered {
			t.Errorf("read back %+v (%v), want %+v", back, err, tc.r)
		}
	}
}

// Interrupted every 250 queries and resumed each time from the last
// result, the reconstruction still ends with the rows of an uninterrupted
// run: a column cut short twice, or in its first group, resumes as well.
func TestIDPReconstructResumesAgainAndAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("scale: a reconstruction interrupted and resumed every 250 queries: skipped under -short; go test ./... runs it")
	}
	o := allPeople()
	o.Target.Where = "suburb = 'suburb_0003'"
	full, err := attacks.Execute(context.Background(), attacks.IDPReconstruct, reconEngine(t, 1), o, reconPeople(t))
	if err != nil {
		t.Fatal(err)
	}
	saved, total := "", 0
	for run := 1; ; run++ {
		if run > 20 {
			t.Fatalf("not finished after %d runs and %d queries (the whole run takes %d)", run-1, total, full.Queries)
		}
		ctx, cancel := context.WithCancel(context.Background())
		q := reconEngine(t, 1)
		q.Querier = &cancelAfter{q: q.Querier, n: 250, cancel: cancel}
		if saved != "" {
			o.Params = &attacks.ReconstructParams{Resume: saved}
		}
		res, err := attacks.Execute(ctx, attacks.IDPReconstruct, q, o, reconPeople(t))
		cancel()
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		total += res.Queries
		if cols, rows := attacks.ReconstructedRows(res); len(cols) == len(o.Domains) {
			if _, want := attacks.ReconstructedRows(full); !reflect.DeepEqual(rows, want) || !*res.Exact {
				t.Fatalf("run %d ended with %d distinct rows, want %d", run, len(rows), len(want))
			}
			t.Logf("%d runs, %d queries in all; the whole run took %d", run, total, full.Queries)
			return
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		saved = filepath.Join(t.TempDir(), fmt.Sprintf("run%d.json", run))
		if err := os.WriteFile(saved, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

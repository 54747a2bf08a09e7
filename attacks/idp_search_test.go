package attacks_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"countwall/attacks"
	"countwall/dataset"
)

// searchPeople is a people table of 1,500 rows: its columns past the
// first few split more than the 512 groups a search halves before it
// weighs.
func searchPeople(t testing.TB) string {
	t.Helper()
	return sharedDB(t, "search-people.db", func(path string) error {
		return dataset.GeneratePeople(context.Background(), path, dataset.PeopleOptions{Rows: 1500, Seed: 5}, dataset.WriteOptions{})
	})
}

// The weighted search rebuilds the same rows as the paper's halving one,
// exactly, in fewer queries, and asks the same queries whatever the
// connections: over 4 sessions with 4 searches in flight on each (their
// batches wait for one another at each batch's end), the queries per
// column, the rows and the progress are the sequential run's.
func TestIDPReconstructWeightedSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("scale: a 1,500-row table rebuilt three times: skipped under -short; go test ./... runs it")
	}
	db := searchPeople(t)
	engine := func() attacks.Querier {
		return attacks.InProcess{Session: peopleEngine(t, db, "exact", 1, "normal").NewSession("mallory")}
	}
	run := func(search string, parallel, pipeline int) *attacks.Result {
		t.Helper()
		o := allPeople()
		o.Params = &attacks.ReconstructParams{Search: search}
		q := engine()
		o.Parallel, o.Pipeline = parallel, pipeline
		if parallel > 1 {
			o.Reconnect = func(context.Context) (attacks.Querier, func(), error) { return engine(), func() {}, nil }
		}
		res, err := attacks.Execute(context.Background(), attacks.IDPReconstruct, &attacks.Logged{Querier: q}, o, db)
		if err != nil {
			t.Fatal(err)
		}
		if res.Recovered != 1500 || !*res.Exact || res.Note != "" {
			t.Fatalf("%s search: recovered %d rows (exact %v), note %q", search, res.Recovered, *res.Exact, res.Note)
		}
		return res
	}
	halving := run(attacks.SearchHalving, 1, 1)
	weighted := run(attacks.SearchWeighted, 1, 1)
	t.Logf("halving %d queries, weighted %d; per column %v and %v", halving.Queries, weighted.Queries,
		halving.Details["queries_per_column"], weighted.Details["queries_per_column"])
	_, halvingRows := attacks.ReconstructedRows(halving)
	_, weightedRows := attacks.ReconstructedRows(weighted)
	if !reflect.DeepEqual(weightedRows, halvingRows) {
		t.Errorf("the weighted search rebuilt other rows than the halving one")
	}
	if weighted.Queries >= halving.Queries {
		t.Errorf("weighted search: %d queries, halving %d: want fewer", weighted.Queries, halving.Queries)
	}
	parallel := run("", 4, 4) // weighted, the default
	_, parallelRows := attacks.ReconstructedRows(parallel)
	if !reflect.DeepEqual(parallelRows, weightedRows) {
		t.Errorf("4 sessions x 4 searches rebuilt other rows than one session")
	}
	for _, key := range []string{"queries", "queries_per_column", "groups_per_column"} {
		if !reflect.DeepEqual(parallel.Details[key], weighted.Details[key]) {
			t.Errorf("4 sessions x 4 searches: %s %v, one session %v", key, parallel.Details[key], weighted.Details[key])
		}
	}
}

// An unknown --search is refused before any query.
func TestIDPReconstructRefusesAnUnknownSearch(t *testing.T) {
	o := allPeople()
	o.Params = &attacks.ReconstructParams{Search: "bisect"}
	q := &countingQuerier{}
	if _, err := attacks.IDPReconstruct.Run(context.Background(), q, o); err == nil {
		t.Fatal("--search bisect was taken")
	}
	if q.n != 0 {
		t.Errorf("%d queries sent before the refusal", q.n)
	}
}

// countingQuerier answers nothing and counts what it was asked.
type countingQuerier struct{ n int }

func (q *countingQuerier) Query(context.Context, string) (*attacks.Rows, error) {
	q.n++
	return nil, fmt.Errorf("no firewall here")
}

package proxy

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"countwall/ir"
	"countwall/mechanisms"
	"countwall/planner"
)

// partitionWorld is 300 people in 5 ages (60 each, far above the
// selection's hard threshold, so always released), and the neighbour adds
// one person of an age no one else has: a group that exists for one person.
func partitionWorld() (with, without []neighbourRow) {
	for p := 1; p <= 300; p++ {
		without = append(without, neighbourRow{p, 20 + p%5, []string{"F", "M"}[p%2], int64(p % 5)})
	}
	with = append(slices.Clone(without), neighbourRow{9000, 99, "F", int64(1)})
	return with, without
}

// partitionDraws and partitionAlpha size TestPartitionSelectionNeighbours:
// 20,000 answers per world, and each probability bounded by Clopper-Pearson
// at alpha 1e-7 one-sided; 2 bounds per mechanism, 4 in all, make the
// false-failure rate below 4e-7.
const (
	partitionDraws = 20000
	partitionAlpha = 1e-7
)

// TestPartitionSelectionNeighbours: under laplace and gaussian, GROUP BY
// over a column without a declared domain, on two databases that differ in
// one person who alone holds a group. The test uses a generous delta (0.05
// a query) so that the probability is measurable. Both databases are
// answered through the Engine (the same SQLSTATE, a charge of the query's
// epsilon and the selection's delta); then 20,000 answers are drawn per
// world from the cells the Engine computed, as the Engine answers them. The
// lone person's group must appear with probability at most the selection's
// delta (delta/G, G = 1), and the keys returned for the two neighbours must
// differ only with that probability; the background groups always appear.
func TestPartitionSelectionNeighbours(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: 20,000 answers per world: skipped under -short; go test ./... runs it")
	}
	const stmt = "SELECT age, COUNT(*) FROM people GROUP BY age"
	dir := t.TempDir()
	with, without := partitionWorld()
	paths := [2]string{filepath.Join(dir, "with.db"), filepath.Join(dir, "without.db")}
	writeNeighbourTable(t, paths[0], with)
	writeNeighbourTable(t, paths[1], without)
	for _, tc := range []struct {
		mechanism string
		selDelta  float64 // the selection's share of delta 0.05
		want      mechanisms.Charge
	}{
		{"laplace", 0.05, mechanisms.Charge{Kind: mechanisms.AccountingDP, Epsilon: 1, Delta: 0.05}},
		{"gaussian", 0.025, mechanisms.Charge{Kind: mechanisms.AccountingDP, Epsilon: 0.5, Delta: 0.025}},
	} {
		t.Run(tc.mechanism, func(t *testing.T) {
			var results [2]*ir.Result
			var engine *Engine
			for i, path := range paths {
				e, rec := partitionEngine(t, dir, fmt.Sprintf("%s-%d", tc.mechanism, i), path, tc.mechanism)
				res, err := e.Query(context.Background(), "alice", stmt)
				if err != nil {
					t.Fatalf("world %d: %v", i, err)
				}
				if tc.mechanism == "gaussian" && !strings.Contains(res.Notice, "and epsilon 0.5, delta 0.025 (dp, zCDP") {
					t.Errorf("the notice does not state the selection's charge: %q", res.Notice)
				}
				bals, err := e.budget.Balances(context.Background(), "alice")
				if err != nil {
					t.Fatal(err)
				}
				if b := bals[0]; tc.want.Epsilon == 1 && (b.EpsilonSpent != 1 || b.DeltaSpent != 0.05) {
					t.Fatalf("world %d: spent epsilon %g delta %g, want 1 and 0.05", i, b.EpsilonSpent, b.DeltaSpent)
				}
				results[i], engine = rec.last, e
			}
			rt := engine.live.Load()
			parsed, err := planner.Parse(stmt, nil, rt.catalog)
			if err != nil {
				t.Fatal(err)
			}
			q := parsed.(*ir.Query)
			table := rt.catalog.Tables[q.Table]
			appears, differ := 0, 0
			for range partitionDraws {
				var keys [2][]string
				for w, res := range results {
					req := &mechanisms.Request{Query: q, Table: table, Bounds: res.Bounds, Result: res, Epsilon: 1, Delta: 0.05}
					answers, charge, err := rt.mech.Answer(context.Background(), req)
					if err != nil {
						t.Fatal(err)
					}
					if charge.Epsilon != tc.want.Epsilon || charge.Delta != tc.want.Delta {
						t.Fatalf("charged %+v, want the selection's share as in %+v", charge, tc.want)
					}
					for i, a := range answers {
						if !a.Dropped {
							keys[w] = append(keys[w], res.Cells[i].Group[0].Text)
						}
					}
				}
				if slices.Contains(keys[0], "99") {
					appears++
				}
				if !slices.Equal(keys[0], keys[1]) {
					differ++
				}
				if len(keys[1]) != 5 {
					t.Fatalf("the background's groups were not all released: %v", keys[1])
				}
			}
			for what, k := range map[string]int{"the lone person's group appeared": appears, "the neighbours' keys differed": differ} {
				lo, _ := clopperPearson(k, partitionDraws, partitionAlpha)
				if lo > tc.selDelta || k == 0 {
					t.Errorf("%s %d of %d times: lower bound %.4f > delta %g (or never: the test would not see it)", what, k, partitionDraws, lo, tc.selDelta)
				}
				t.Logf("%s %d of %d times (%.4f; delta %g)", what, k, partitionDraws, float64(k)/partitionDraws, tc.selDelta)
			}
		})
	}
}

// partitionEngine is an Engine over database under mechanism with a share of
// epsilon 1 and delta 0.05, whose age column has no declared domain.
func partitionEngine(t *testing.T, dir, name, database, mechanism string) (*Engine, *recordingBackend) {
	t.Helper()
	body := shareConfigText(database, filepath.Join(dir, name+"-state.db"), mechanism, 0.05, 0.4, "")
	return openRecording(t, filepath.Join(dir, name+".yaml"), body, Options{NoiseSeed: 7})
}

// shareConfigText is the config of a people table with unit id under
// mechanism, at epsilon 1 and the given delta a query (SET may choose up to
// twice that), caps far above one test's spending (delta's deltaCap), and
// table's lines added under the table.
func shareConfigText(database, state, mechanism string, delta, deltaCap float64, table string) string {
	return fmt.Sprintf(`
database: %s
state: %s
mechanism:
  name: %s
budget:
  epsilon: {default: 1, min: 0.01, max: 1}
  delta: {default: %g, min: 0, max: %g}
  epsilon_cap: 1000
  delta_cap: %g
policy:
  max_groups: 1000
tables:
  people:
    privacy_unit: id
%s`, database, state, mechanism, delta, 2*delta, deltaCap, table)
}

// openRecording opens an Engine from a config's text, written to path, with
// a backend that keeps the last cells computed; it is closed with the test.
func openRecording(t *testing.T, path, body string, opts Options) (*Engine, *recordingBackend) {
	t.Helper()
	e, err := Open(context.Background(), loadConfigText(t, path, body), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	rec := &recordingBackend{inner: e.backend}
	e.backend = rec
	return e, rec
}

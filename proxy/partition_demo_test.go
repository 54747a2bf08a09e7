package proxy

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"countwall/dataset"
	"countwall/ir"
	"countwall/mechanisms"
)

// demoSelection is what the runs of one configuration released.
type demoSelection struct {
	released      []int   // groups released per run
	smallest      int64   // the fewest people in a released suburb, over the runs
	largestDrop   int64   // the most people in a dropped suburb, over the runs
	absErr, cells float64 // sum of |answer - truth| over released cells, and their number
}

// TestPartitionSelectionOnTheDemoTable measures GROUP BY suburb on the demo
// table (`countwall gen people`: 100,000 people, seed 1, 1,000 suburbs of 6
// to 13,373 people, Zipf-popular) at epsilon 1 and delta 1e-5 a query,
// under laplace and gaussian, with suburb undeclared (partition selection)
// and declared (the 1,000 suburbs as its domain), 10 runs each through the
// Engine, and prints the figures of docs/mechanisms.md:
//
//	go test ./proxy -run TestPartitionSelectionOnTheDemoTable -v
//
// It checks what must hold on every run: every suburb at or above the
// selection's hard threshold is released, the declared answer has all
// 1,000 suburbs, and the mean absolute error of the counts is within half
// again its expectation (the noise's mean absolute value; over at least
// 5,000 cells the chance of a false failure is below 1e-12).
func TestPartitionSelectionOnTheDemoTable(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: the selection over a 20,000-row table: skipped under -short; go test ./... runs it")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "people.db")
	if err := dataset.GeneratePeople(context.Background(), db, dataset.PeopleOptions{Rows: dataset.DefaultPeopleRows, Seed: 1}, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	const runs, eps, delta = 10, 1.0, 1e-5
	for _, name := range []string{"laplace", "gaussian"} {
		for _, declared := range []bool{false, true} {
			e, rec := demoEngine(t, dir, db, name, declared)
			var got demoSelection
			got.smallest = math.MaxInt64
			for range runs {
				res, err := e.Query(context.Background(), "alice", "SELECT suburb, COUNT(*) FROM people GROUP BY suburb")
				if err != nil {
					t.Fatal(err)
				}
				got.add(res, rec.last.Cells)
			}
			selEps, selDelta, _ := mechanisms.SelectionShare(e.live.Load().mech, eps, delta)
			hard, err := mechanisms.SelectionHardThreshold(1, selEps, selDelta)
			if err != nil {
				t.Fatal(err)
			}
			meanAbs := got.absErr / got.cells
			want := demoNoiseMeanAbs(t, name, declared, eps, delta)
			t.Logf("%s, suburb %s: released %v of 1000 (hard threshold %d); smallest released %d people, largest dropped %d; mean |error| %.2f over %.0f cells (expected %.2f)",
				name, map[bool]string{false: "undeclared", true: "declared"}[declared], got.released, hard, got.smallest, got.largestDrop, meanAbs, got.cells, want)
			switch {
			case declared && strings.Trim(fmt.Sprint(got.released), "[] 1000") != "":
				t.Errorf("declared: released %v, want 1000 every run", got.released)
			case !declared && got.largestDrop >= int64(hard):
				t.Errorf("a suburb of %d people was dropped, at or above the hard threshold %d", got.largestDrop, hard)
			case meanAbs > 1.5*want:
				t.Errorf("mean |error| %.2f, expected about %.2f", meanAbs, want)
			}
		}
	}
}

// add records one answer against the true counts.
func (d *demoSelection) add(res *Result, cells []ir.Cell) {
	truth := map[string]int64{}
	for _, c := range cells {
		truth[c.Group[0].Text] = c.Count
	}
	released := map[string]bool{}
	for _, row := range res.Rows {
		s := row[0].Text
		released[s] = true
		d.absErr += math.Abs(float64(row[1].Int - truth[s]))
		d.cells++
		if truth[s] < d.smallest {
			d.smallest = truth[s]
		}
	}
	for s, n := range truth {
		if !released[s] && n > d.largestDrop {
			d.largestDrop = n
		}
	}
	d.released = append(d.released, len(res.Rows))
}

// demoNoiseMeanAbs is the mean absolute value of the counts' noise: b for
// Laplace of scale b, sigma*sqrt(2/pi) for Gaussian (before rounding).
func demoNoiseMeanAbs(t *testing.T, name string, declared bool, eps, delta float64) float64 {
	t.Helper()
	share := 1.0
	if !declared {
		share = 0.5 // the selection's half of epsilon (and, for gaussian, of delta)
	}
	if name == "laplace" {
		return 1 / (eps * share)
	}
	sigma, err := mechanisms.GaussianSigma(1, 1, eps*share, delta*share)
	if err != nil {
		t.Fatal(err)
	}
	return sigma * math.Sqrt(2/math.Pi)
}

// demoEngine serves the demo table under mechanism at epsilon 1, delta 1e-5
// a query, with suburb's 1,000 names declared or not.
func demoEngine(t *testing.T, dir, db, mechanism string, declared bool) (*Engine, *recordingBackend) {
	t.Helper()
	domain := ""
	if declared {
		names := make([]string, 1000)
		for i := range names {
			names[i] = fmt.Sprintf("suburb_%04d", i+1)
		}
		domain = "    domains:\n      suburb: [" + strings.Join(names, ", ") + "]\n"
	}
	name := fmt.Sprintf("%s-%v", mechanism, declared)
	body := shareConfigText(db, filepath.Join(dir, name+"-state.db"), mechanism, 1e-5, 0.01, "    unit_keyed: true\n"+domain)
	e, rec := openRecording(t, filepath.Join(dir, name+".yaml"), body, Options{})
	e.queueAnswerAudit = true
	return e, rec
}

package attacks

import (
	"context"
	"fmt"
	"testing"
)

func TestPerturbationFinderThroughTheEngine(t *testing.T) {
	q := engineQuerier(t, "cellkey", "ptable: uniform, D: 3, suppress_at: 4", 1)
	var cells []string
	for i := 1; i <= 60; i++ {
		cells = append(cells, fmt.Sprintf("suburb = 'suburb_%04d'", i))
	}
	o := Options{Target: Target{Table: "people"}, Cells: cells, Split: []string{"sex = 'F'", "sex = 'M'"}}
	res, err := Execute(context.Background(), PerturbationFinder, q, o, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Queries != 180 {
		t.Errorf("queries = %d, want 3m = 180", res.Queries)
	}
	// Through the engine the cell key is additive, |z| stays in {3, 4}, and
	// the attack reads D off it exactly.
	if res.Recovered != 3 {
		t.Errorf("guessed D = %d (%s), want 3", res.Recovered, res.Note)
	}
	t.Logf("D=3 through the engine: guessed %d (%s)", res.Recovered, res.Note)
}

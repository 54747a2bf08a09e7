package report

import (
	"reflect"
	"testing"

	"countwall/attacks"
)

// A run's line ends on its dot: the success, whatever the steps said.
func TestProgressSeriesEndsOnTheDot(t *testing.T) {
	success := func(f float64) *float64 { return &f }
	for _, tc := range []struct {
		name string
		r    attacks.Result
		want []xy
	}{
		{"every step done but not exact (split-averaging)", attacks.Result{Queries: 400, Success: success(0),
			Progress: []attacks.ProgressPoint{{Queries: 200, Done: 100, Total: 200}, {Queries: 400, Done: 200, Total: 200}}},
			[]xy{{0, 0}, {200, 0.5}, {400, 1}, {400, 0}}},
		{"no steps recorded, exact", attacks.Result{Queries: 2, Success: success(1)}, []xy{{0, 0}, {2, 1}}},
		{"no steps recorded, wrong", attacks.Result{Queries: 2, Success: success(0)}, []xy{{0, 0}, {2, 0}}},
		{"steps end where it succeeded", attacks.Result{Queries: 10, Success: success(1),
			Progress: []attacks.ProgressPoint{{Queries: 10, Done: 4, Total: 4}}}, []xy{{0, 0}, {10, 1}}},
		{"refused part way", attacks.Result{Queries: 11, Refused: 1, Success: success(0),
			Progress: []attacks.ProgressPoint{{Queries: 9, Done: 9, Total: 203}}}, []xy{{0, 0}, {9, 9.0 / 203}, {11, 0}}},
		{"unscored, steps recorded", attacks.Result{Queries: 8, Progress: []attacks.ProgressPoint{{Queries: 6, Done: 3, Total: 4}}},
			[]xy{{0, 0}, {6, 0.75}, {8, 0.75}}},
		{"unscored, undecided", attacks.Result{Queries: 2, Undecided: true}, []xy{{0, 0}, {2, 0}}},
	} {
		s := progressSeries("run", "#000", &tc.r)
		if !reflect.DeepEqual(s.points, tc.want) {
			t.Errorf("%s: points %v, want %v", tc.name, s.points, tc.want)
		}
		if s.final != nil && *s.final != s.points[len(s.points)-1] {
			t.Errorf("%s: the dot %v is not the line's last point %v", tc.name, *s.final, s.points[len(s.points)-1])
		}
		if (s.final != nil) != (tc.r.Success != nil) {
			t.Errorf("%s: dot %v for success %v", tc.name, s.final, tc.r.Success)
		}
	}
}

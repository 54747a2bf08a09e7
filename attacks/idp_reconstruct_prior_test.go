package attacks

import "testing"

// TestValuePriorCut: a range is cut at half its values without rows found,
// else at the first value where the rows expected below reach half the
// range's (each value a 1/size share of a row besides the rows found).
func TestValuePriorCut(t *testing.T) {
	skewed := newValuePrior(map[int64]int64{0: 90, 5: 10}, 10)
	for _, tc := range []struct {
		name  string
		prior *valuePrior
		i, j  int64
		want  int64
	}{
		{"no prior halves", nil, 0, 10, 5},
		{"no rows found halves", newValuePrior(nil, 10), 3, 10, 6},
		{"the common value alone on the left", skewed, 0, 10, 1},
		{"the rest: up to the next value found", skewed, 1, 10, 6},
		{"a range without rows found halves", skewed, 6, 10, 8},
		{"two values: the only cut", skewed, 4, 6, 5},
		{"the common value last: cut just before it", newValuePrior(map[int64]int64{9: 50}, 10), 0, 10, 9},
	} {
		if got := tc.prior.cut(tc.i, tc.j); got != tc.want {
			t.Errorf("%s: cut(%d, %d) = %d, want %d", tc.name, tc.i, tc.j, got, tc.want)
		}
	}
}

// TestCheckSearch: weighted, halving and the default are taken; anything
// else is refused.
func TestCheckSearch(t *testing.T) {
	for s, ok := range map[string]bool{"": true, SearchWeighted: true, SearchHalving: true, "bisect": false, "Weighted": false} {
		if err := checkSearch(s); (err == nil) != ok {
			t.Errorf("checkSearch(%q) = %v, want ok %v", s, err, ok)
		}
	}
}

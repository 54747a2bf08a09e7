package catalog

import (
	"database/sql/driver"
	"encoding/json"
	"math"
	"testing"
)

// TestSeriesEnds: generate_series at the ends of int64 is cut at
// maxSeries values, neither overflowing the width nor looping past the
// largest int64.
func TestSeriesEnds(t *testing.T) {
	for _, c := range []struct {
		start, stop int64
		n           int
		first, last int64
	}{
		{1, 3, 3, 1, 3},
		{5, 5, 1, 5, 5},
		{math.MinInt64, math.MaxInt64, maxSeries, math.MinInt64, math.MinInt64 + maxSeries - 1},
		{-5e18, 5e18, maxSeries, -5e18, -5e18 + maxSeries - 1},
		{math.MaxInt64 - 2, math.MaxInt64, 3, math.MaxInt64 - 2, math.MaxInt64},
	} {
		v, err := sqlSeries(nil, []driver.Value{c.start, c.stop})
		if err != nil {
			t.Fatalf("sqlSeries(%d, %d): %v", c.start, c.stop, err)
		}
		var got []int64
		if err := json.Unmarshal([]byte(v.(string)), &got); err != nil {
			t.Fatalf("sqlSeries(%d, %d) = %v: %v", c.start, c.stop, v, err)
		}
		if len(got) != c.n || got[0] != c.first || got[len(got)-1] != c.last {
			t.Errorf("sqlSeries(%d, %d): %d values from %d to %d, want %d from %d to %d",
				c.start, c.stop, len(got), got[0], got[len(got)-1], c.n, c.first, c.last)
		}
	}
}

package snapshot

import "testing"

func TestCompareIntReal(t *testing.T) {
	cases := []struct {
		i    int64
		f    float64
		want int
	}{
		{1, 1.0, 0}, {1, 1.5, -1}, {2, 1.5, 1}, {-1, -1.5, 1}, {-2, -1.5, -1},
		{1<<53 + 1, 1 << 53, 1}, {9223372036854775807, 9223372036854775807.0, -1}, {-9223372036854775808, -9223372036854775808.0, 0},
	}
	for _, tc := range cases {
		if got := compareIntReal(tc.i, tc.f); got != tc.want {
			t.Errorf("compareIntReal(%d, %g) = %d, want %d", tc.i, tc.f, got, tc.want)
		}
	}
}

package snapshot

import "testing"

func TestLikeMatchesSQLite(t *testing.T) {
	cases := []struct {
		s, p string
		want bool
	}{
		{"North", "N%", true}, {"north", "N%", false}, {"a_b", `a\_b`, true}, {"axb", `a\_b`, false},
		{"axb", "a_b", true}, {"a%b", `a\%b`, true}, {"", "%", true}, {"", "", true}, {"x", "", false},
		{"East", "_ast", true}, {"ab", `ab\`, false}, {"é", "_", true}, {"éa", "_a", true},
		{"abc", "%%c", true}, {"abc", "%_%_%_%", true}, {"ab", "%_%_%_%", false}, {"a\\b", `a\\b`, true},
	}
	for _, tc := range cases {
		if got := likeMatches(tc.s, tc.p); got != tc.want {
			t.Errorf("likeMatches(%q, %q) = %v, want %v", tc.s, tc.p, got, tc.want)
		}
	}
}

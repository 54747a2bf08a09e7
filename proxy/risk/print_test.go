package risk

import "testing"

func TestFindingsSaysItsNumber(t *testing.T) {
	for n, want := range map[int]string{0: "0 findings", 1: "1 finding", 2: "2 findings", 40393: "40393 findings"} {
		if got := Findings(n); got != want {
			t.Errorf("Findings(%d) = %q, want %q", n, got, want)
		}
	}
}

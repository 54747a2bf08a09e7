package proxy

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// An Engine opened with Options.Secret keys its sticky noise with that
// secret instead of the state database's: the same secret gives the same
// answers on the same state, a different one different answers, and a
// secret too short to be one is refused.
func TestOptionsSecret(t *testing.T) {
	f := newFixture(t, 2000)
	params := map[string]any{"ptable": "uniform", "d": 2, "suppress_at": 4}
	answers := func(secret []byte) []int64 {
		t.Helper()
		e, err := Open(context.Background(), f.config(t, "cellkey", params), Options{Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		var out []int64
		for age := 18; age < 78; age++ {
			out = append(out, counts(t, e, fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age = %d", age))[0])
		}
		return out
	}
	a1, b := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	first, again, other := answers(a1), answers(a1), answers(b)
	stateDefault := answers(nil)
	var differ, differState int
	for i := range first {
		if first[i] != again[i] {
			t.Errorf("age %d: %d then %d under the same secret", 18+i, first[i], again[i])
		}
		if first[i] != other[i] {
			differ++
		}
		if first[i] != stateDefault[i] {
			differState++
		}
	}
	// As in TestCellKeyIsStickyAcrossTextAndRestart: each cell keeps its
	// answer under an independent secret with probability 1/5, so fewer
	// than 20 of 60 changing has probability below 1e-9.
	if differ < 20 || differState < 20 {
		t.Errorf("only %d (another secret) and %d (the state's) of 60 cells changed", differ, differState)
	}
	_, err := Open(context.Background(), f.config(t, "cellkey", params), Options{Secret: []byte("short")})
	if err == nil || !strings.Contains(err.Error(), "at least 32 bytes") {
		t.Errorf("a 5-byte secret: %v", err)
	}
}

package attacks_test

import (
	"context"
	"strings"
	"testing"

	"countwall/attacks"
)

// The secret may be a condition rather than a 0/1 column: with exact
// answers the attack recovers, for every person of the group, whether the
// condition holds (here sex = 'F', a text column), and scores it against
// the truth read with the same condition.
func TestLinearReconstructionTakesTheSecretAsACondition(t *testing.T) {
	if testing.Short() {
		t.Skip("scale: a reconstruction of every person of a group: skipped under -short; go test ./... runs it")
	}
	for _, secret := range []string{"sex = 'F'", "secret", `"secret"`, "secret = 1"} {
		q := engineOver(t, reconPeople(t), "exact", "", peopleTables, "")
		o := linearOptions(t, "lsq")
		o.Params.(*attacks.LinearParams).Secret = secret
		res, err := attacks.Execute(context.Background(), attacks.LinearReconstruction, q, o, reconPeople(t))
		if err != nil {
			t.Fatalf("--secret %q: %v", secret, err)
		}
		if res.Undecided || res.CellsTotal < 80 || *res.CellsExact != res.CellsTotal {
			t.Errorf("--secret %q: recovered %v of %d bits, note %q", secret, res.CellsExact, res.CellsTotal, res.Note)
		}
		want := "secret = 1 AND "
		if strings.Contains(secret, "=") {
			want = "(" + secret + ") AND "
		}
		if script := attacks.LinearReconstruction.Script(o); !strings.Contains(script[0], want) {
			t.Errorf("--secret %q: first statement %q lacks %q", secret, script[0], want)
		}
	}
}

package release

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestStatementPutsTheConstantsBack(t *testing.T) {
	consts := make([]Constant, 11)
	for i := range consts {
		consts[i] = Constant{Text: string(rune('a' + i)), String: true}
	}
	consts[0] = Constant{Text: "it's", String: true}
	consts[1] = Constant{Text: "-2.5"}
	for _, tc := range []struct {
		r    Release
		want string
	}{
		{Release{Shape: "select count(*) from people where suburb = $1 and age > $2", Constants: consts[:2]},
			"select count(*) from people where suburb = 'it''s' and age > -2.5"},
		{Release{Shape: "select count(*) from t where a in ($10, $11, $1)", Constants: consts},
			"select count(*) from t where a in ('j', 'k', 'it''s')"},
		{Release{Shape: "select count(*) from t where a = $3", Constants: consts[:2]}, "select count(*) from t where a = $3"},
		{Release{}, ""},
	} {
		if got := tc.r.Statement(); got != tc.want {
			t.Errorf("Statement() = %q, want %q", got, tc.want)
		}
	}
}

func TestJSONLinesRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 0, 0, 123000, time.UTC)
	rs := []Release{
		{ID: 1, At: at, Analyst: "a", Kind: "query", Mechanism: "idp", Outcome: "answered", Fingerprint: "00ff", ChargeKind: "idp", Epsilon: 1e-10,
			Shape: "select count(*) > $1 from t", Constants: []Constant{{Text: "3"}}, Cells: []Cell{{Value: 0.5, IsFloat: true}}},
		{ID: 2, At: at, Analyst: "b", Kind: "invalid", Mechanism: "idp", Outcome: "refused", SQLState: "42601", Reason: "syntax error", Fingerprint: "01"},
	}
	var buf bytes.Buffer
	if err := Write(&buf, rs); err != nil {
		t.Fatal(err)
	}
	if strings.Count(buf.String(), "\n") != 2 {
		t.Fatalf("not one line per release:\n%s", buf.String())
	}
	back, err := Read(&buf)
	if err != nil || !reflect.DeepEqual(back, rs) {
		t.Errorf("read back %+v (%v), want %+v", back, err, rs)
	}
	if _, err := Read(strings.NewReader("{\"id\":1}\n{oops\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a malformed line: %v", err)
	}
}

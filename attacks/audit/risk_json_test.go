package audit

import (
	"bytes"
	"encoding/json"
	"testing"

	"countwall/proxy/risk"
)

func TestReportsJSONAsMarshalIndent(t *testing.T) {
	truth, correct := 3.0, true
	full := risk.Report{Analyst: "a<b>", Answered: 7, Skipped: `row "x"`, Unread: 2, Findings: []risk.Finding{
		{Analyst: "a<b>", Pattern: "p", Table: "t", Cell: []string{"x = 'a&b'", `y = "q"`}, Value: 3, Evidence: []int64{1, 2}, Statements: 2, Truth: &truth, Correct: &correct},
		{Analyst: "a<b>", Pattern: "q", Parameter: "D", AtLeast: true, Value: 2, Note: `"findings": []`},
	}}
	for name, reports := range map[string][]risk.Report{
		"nil":          nil,
		"empty":        {},
		"no findings":  {{Analyst: "a", Answered: 1, Skipped: "s"}},
		"empty list":   {{Analyst: "a", Findings: []risk.Finding{}}},
		"findings":     {full},
		"two analysts": {full, {Analyst: "b", Findings: full.Findings[:1]}},
		"one finding":  {{Analyst: "c", Findings: full.Findings[1:]}},
	} {
		want, err := json.MarshalIndent(reports, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := encodeReports(&got, reports); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: got\n%s\nwant\n%s", name, got.Bytes(), want)
		}
	}
}

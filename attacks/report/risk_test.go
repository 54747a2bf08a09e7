package report

import (
	"bytes"
	"strings"
	"testing"

	"countwall/proxy/risk"
)

func TestRiskSection(t *testing.T) {
	truth, holds := 5.0, true
	runs := []RiskRun{{Setting: "suppress", Analysts: []string{"demo", "differencing"}, Reports: []risk.Report{{
		Analyst: "differencing", Answered: 2,
		Findings: []risk.Finding{{Analyst: "differencing", Pattern: "differencing", Table: "people",
			Cell: []string{"suburb = 'suburb_0015'", "age > 60"}, Value: 5, Evidence: []int64{2, 3}, Truth: &truth, Correct: &holds}},
	}}}, {Setting: "laplace", Analysts: []string{"prior-release"}, Published: "100 answers of the exact release firewall to publisher"}}
	var text bytes.Buffer
	if err := PrintRisk(&text, runs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  suppress                     demo                   nothing determined\n",
		"  suppress                     differencing           1 finding, 0 about one person; 1 of 1 hold on the protected table\n",
		"e.g. differencing: count of people: age > 60 and suburb = 'suburb_0015' = 5\n",
		"  laplace                      (combined with the published release: 100 answers of the exact release firewall to publisher)\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text section lacks %q:\n%s", want, text.String())
		}
	}
	var page strings.Builder
	writeRiskHTML(&page, runs)
	for _, want := range []string{"<h2>What the audit says each analyst learned</h2>",
		"<tr><td>suppress</td><td>demo</td><td>nothing determined</td><td></td></tr>",
		"<td>differencing: count of people: age &gt; 60 and suburb = &#39;suburb_0015&#39; = 5</td>",
		`<tr><td>laplace</td><td colspan="3">combined with the published release: 100 answers of the exact release firewall to publisher</td></tr>`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page section lacks %q:\n%s", want, page.String())
		}
	}
	var empty strings.Builder
	writeRiskHTML(&empty, nil)
	if empty.Len() != 0 {
		t.Errorf("a card without risk runs has a risk section: %q", empty.String())
	}
}

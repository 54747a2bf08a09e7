package metrics

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// quietEngine is an Engine with no sessions, budgets or snapshots.
type quietEngine struct{}

func (quietEngine) OpenSessions() int                            { return 0 }
func (quietEngine) BudgetSpent(context.Context) ([]Spent, error) { return nil, nil }
func (quietEngine) SnapshotStates() map[string]string            { return nil }

// The risk monitor's decisions are exposed per analyst as counts: the
// findings, those about one person, and whether the analyst is suspended;
// a later decision replaces an earlier one.
func TestRiskDecisionsAreExposed(t *testing.T) {
	m := New(quietEngine{}, nil)
	m.Risk("alice", 12, 3, true)
	m.Risk("bob", 4, 0, false)
	m.Risk("bob", 0, 0, false)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing the exposition format: %v\n%s", err, body)
	}
	want := map[string]map[string]float64{
		"countwall_risk_findings":     {"alice": 12, "bob": 0},
		"countwall_risk_individuals":  {"alice": 3, "bob": 0},
		"countwall_analyst_suspended": {"alice": 1, "bob": 0},
	}
	for name, byAnalyst := range want {
		f := families[name]
		if f == nil {
			t.Fatalf("no %s in\n%s", name, body)
		}
		got := map[string]float64{}
		for _, metric := range f.GetMetric() {
			if len(metric.GetLabel()) != 1 || metric.GetLabel()[0].GetName() != "analyst" {
				t.Errorf("%s: labels %v, want only analyst", name, metric.GetLabel())
			}
			got[metric.GetLabel()[0].GetValue()] = metric.GetGauge().GetValue()
		}
		for analyst, v := range byAnalyst {
			if got[analyst] != v {
				t.Errorf("%s{analyst=%q} = %v, want %v", name, analyst, got[analyst], v)
			}
		}
	}
}

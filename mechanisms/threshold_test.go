package mechanisms

import (
	"context"
	"reflect"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
)

func TestThresholdAnswers(t *testing.T) {
	in := []Answer{
		{Int: 5},
		{Int: 6},
		{Int: 0},
		{Float: 5.5, IsFloat: true},
		{Float: 5.0, IsFloat: true},
		{Suppressed: true},
		{Dropped: true},
	}
	tests := []struct {
		name string
		q    *ir.Query
		want []Answer
	}{
		{"not a threshold query: unchanged", &ir.Query{}, in},
		{"COUNT(*) > 5", &ir.Query{Threshold: &ir.Threshold{Bound: 5}}, []Answer{
			{Int: 0}, {Int: 1}, {Int: 0}, {Int: 1}, {Int: 0}, {Suppressed: true}, {Dropped: true},
		}},
		// COUNT(*) >= 0 normalises to Bound -1: every published count passes,
		// but a withheld count still answers a suppressed 0.
		{"COUNT(*) >= 0", &ir.Query{Threshold: &ir.Threshold{Bound: -1}}, []Answer{
			{Int: 1}, {Int: 1}, {Int: 1}, {Int: 1}, {Int: 1}, {Suppressed: true}, {Dropped: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := thresholdAnswers(tt.q, in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestMechanismsRefuseMalformedRequests(t *testing.T) {
	for _, name := range []string{"exact", "suppress", "bounded", "cellkey"} {
		m := newMechanismForTest(t, name, nil, 1)
		for _, req := range []*Request{nil, {}, {Query: &ir.Query{}}} {
			_, _, err := m.Answer(context.Background(), req)
			pe, ok := err.(*pgerror.Error)
			if !ok || pe.Code != pgerror.InternalError {
				t.Errorf("%s: request %+v: got %v, want an internal *pgerror.Error", name, req, err)
			}
		}
	}
}

func TestRegisteredWithClaims(t *testing.T) {
	for _, name := range []string{"exact", "suppress", "bounded", "cellkey"} {
		m := newMechanismForTest(t, name, nil, 1)
		if m.Name() != name {
			t.Errorf("New(%q).Name() = %q", name, m.Name())
		}
		d, ok := m.(Describer)
		if !ok {
			t.Errorf("%s does not state its claim (no Describe)", name)
			continue
		}
		if got := d.Describe(); len(got) < len(name)+10 || got[:len(name)+1] != name+":" {
			t.Errorf("%s: Describe() = %q, want a claim starting %q", name, got, name+":")
		}
	}
}

// newMechanismForTest builds a registered mechanism or fails the test.
func newMechanismForTest(t *testing.T, name string, p Params, seed int64) Mechanism {
	t.Helper()
	m, err := New(name, p, Env{Seed: seed})
	if err != nil {
		t.Fatalf("New(%q, %v): %v", name, p, err)
	}
	return m
}

// countCellsRequest is a request over cells with the given true counts (and
// no keys).
func countCellsRequest(q *ir.Query, counts ...int64) *Request {
	cells := make([]ir.Cell, len(counts))
	for i, c := range counts {
		cells[i] = ir.Cell{Count: c, Units: c, InDomain: true}
	}
	return &Request{Query: q, Result: &ir.Result{Cells: cells, Bounds: ir.DefaultBounds()}}
}

// answerWithoutCharge runs a mechanism and fails the test on error.
func answerWithoutCharge(t *testing.T, m Mechanism, req *Request) []Answer {
	t.Helper()
	answers, charge, err := m.Answer(context.Background(), req)
	if err != nil {
		t.Fatalf("%s.Answer: %v", m.Name(), err)
	}
	if charge != (Charge{}) {
		t.Fatalf("%s charged %+v; it has no accounting", m.Name(), charge)
	}
	if len(answers) != len(req.Result.Cells) {
		t.Fatalf("%s answered %d cells of %d", m.Name(), len(answers), len(req.Result.Cells))
	}
	return answers
}

// groupedCountQuery is a GROUP BY query (drop mode applies only to grouped queries).
func groupedCountQuery(threshold *ir.Threshold) *ir.Query {
	return &ir.Query{Table: "people", GroupBy: []string{"age"}, Threshold: threshold}
}

package mechanisms

import (
	"context"
	"math"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
)

func newLayeredForTest(t *testing.T, secret string, p Params) *layered {
	t.Helper()
	m, err := New("layered", p, Env{Secret: []byte(secret)})
	if err != nil {
		t.Fatal(err)
	}
	return m.(*layered)
}

func layeredRequest(q *ir.Query, conds []string, domainComplete bool, cells ...ir.Cell) *Request {
	return &Request{Query: q, Result: &ir.Result{Cells: cells, Conditions: conds, DomainComplete: domainComplete}}
}

func TestLayeredSameQuerySameAnswer(t *testing.T) {
	conds := []string{"age = 30", "sex = 'F'"}
	cell := ir.Cell{Count: 120, Units: 120, Key: 0xdeadbeef, InDomain: true}
	q := &ir.Query{Table: "people"}
	a := newLayeredForTest(t, "secret-1", nil)
	b := newLayeredForTest(t, "secret-1", nil) // a restart: same secret
	first := answerWithoutCharge(t, a, layeredRequest(q, conds, false, cell))
	for i := 0; i < 20; i++ {
		if got := answerWithoutCharge(t, a, layeredRequest(q, conds, false, cell)); got[0] != first[0] {
			t.Fatalf("repeat %d: %+v, first %+v", i, got[0], first[0])
		}
	}
	if got := answerWithoutCharge(t, b, layeredRequest(q, conds, false, cell)); got[0] != first[0] {
		t.Errorf("after a restart: %+v, before %+v", got[0], first[0])
	}
	// The answer is the count plus the layers, rounded.
	sum := 120.0
	for _, l := range a.layers(conds, nil, nil, cell.Key) {
		sum += l.value
	}
	if first[0] != (Answer{Int: int64(math.Round(sum))}) {
		t.Errorf("answer %+v, want round(%v)", first[0], sum)
	}
	// Another secret gives other noise.
	c := newLayeredForTest(t, "secret-2", nil)
	if a.layers(conds, nil, nil, 1)[0].value == c.layers(conds, nil, nil, 1)[0].value {
		t.Error("two secrets gave the same condition layer")
	}
}

func TestLayeredChangingOneConditionChangesOnlyItsLayer(t *testing.T) {
	m := newLayeredForTest(t, "s", nil)
	before := m.layers([]string{"age = 30", "income > 1000", "sex = 'F'"}, nil, nil, 77)
	after := m.layers([]string{"age = 31", "income > 1000", "sex = 'F'"}, nil, nil, 77)
	if len(before) != 4 || len(after) != 4 {
		t.Fatalf("%d and %d layers, want 3 conditions + 1 key layer", len(before), len(after))
	}
	if before[0].value == after[0].value {
		t.Error("the changed condition's layer did not change")
	}
	for i := 1; i < 4; i++ {
		if before[i] != after[i] {
			t.Errorf("layer %d (%q) changed: %v -> %v", i, before[i].label, before[i].value, after[i].value)
		}
	}
	// A query without conditions has only the contributor-key layer; other
	// contributors get another key layer.
	if l := m.layers(nil, nil, nil, 77); len(l) != 1 || l[0] != before[3] {
		t.Errorf("no conditions: %+v, want the key layer only", l)
	}
	if m.layers(nil, nil, nil, 78)[0].value == before[3].value {
		t.Error("another contributor key gave the same layer")
	}
	// A GROUP BY cell's value is a layer of its own.
	g := m.layers(nil, []string{"age"}, []ir.GroupValue{{Text: "30"}}, 77)
	h := m.layers(nil, []string{"age"}, []ir.GroupValue{{Text: "31"}}, 77)
	if len(g) != 2 || g[0].value == h[0].value || g[1] != h[1] {
		t.Errorf("group layers: %+v vs %+v", g, h)
	}
}

// The layer values are standard normal times sd: over 20,000 labels the
// mean and variance match N(0, 4) for sd = 2 (bounds and false-failure
// rate as in noise_test.go; the values are deterministic for the fixed
// secret, so a pass is permanent).
func TestLayeredNoiseIsGaussian(t *testing.T) {
	m := newLayeredForTest(t, "s", Params{"noise_layer_sd": 2})
	xs := make([]float64, noiseSampleLen)
	for i := range xs {
		xs[i] = m.layers(nil, nil, nil, uint32(i))[0].value
	}
	checkMoments(t, "layer values", xs, 0, 4, 3)
}

// The low-count threshold is 3 + 2*sqrt(2) + N(0, 1), about 5.83: 1 unit
// passes with probability P(z < -4.83) < 1e-6 and 11 units are withheld
// with probability P(z > 5.17) < 2e-7, so across 500 keys each the checks
// below fail with probability < 1e-3 for a random secret; the secret is
// fixed, so the outcome is deterministic. At 6 units about P(z < 0.17) =
// 57% pass; 2,000 keys put the share within 0.57 +- 0.06 (5 standard errors).
func TestLayeredLowCountFilter(t *testing.T) {
	m := newLayeredForTest(t, "s", nil)
	grouped := groupedCountQuery(nil)
	passed := func(units int64, key uint32, q *ir.Query, complete bool) Answer {
		cell := ir.Cell{Count: units, Units: units, Key: key, Group: []ir.GroupValue{{Text: "x"}}, InDomain: true}
		return answerWithoutCharge(t, m, layeredRequest(q, nil, complete, cell))[0]
	}
	for key := uint32(0); key < 500; key++ {
		if a := passed(1, key, grouped, false); !a.Dropped {
			t.Fatalf("1 unit, key %d: %+v, want dropped", key, a)
		}
		if a := passed(0, key, grouped, true); !a.Suppressed {
			t.Fatalf("0 units, domain complete, key %d: %+v, want a suppressed 0", key, a)
		}
		if a := passed(1, key, &ir.Query{}, false); !a.Suppressed {
			t.Fatalf("1 unit, no GROUP BY, key %d: %+v, want a suppressed 0", key, a)
		}
		if a := passed(11, key, grouped, false); a.Dropped || a.Suppressed {
			t.Fatalf("11 units, key %d: %+v, want an answer", key, a)
		}
	}
	kept := 0
	const keys = 2000
	for key := uint32(0); key < keys; key++ {
		if a := passed(6, key, grouped, false); !a.Dropped {
			kept++
		}
	}
	if share := float64(kept) / keys; math.Abs(share-0.5675) > 0.06 {
		t.Errorf("6 units passed for %.3f of keys, want about 0.57", share)
	}
}

func TestLayeredAnswersAreNonNegativeIntegers(t *testing.T) {
	m := newLayeredForTest(t, "s", Params{"noise_layer_sd": 50, "low_count_min_threshold": 0, "low_count_mean_gap": 0, "low_count_layer_sd": 0})
	conds := []string{"a = 1", "b = 2", "c = 3"}
	negative := 0
	for key := uint32(0); key < 200; key++ {
		a := answerWithoutCharge(t, m, layeredRequest(&ir.Query{}, conds, false, ir.Cell{Count: 1, Units: 1, Key: key, InDomain: true}))[0]
		if a.IsFloat || a.Int < 0 || a.Suppressed {
			t.Fatalf("key %d: %+v", key, a)
		}
		if a.Int == 0 {
			negative++ // clamped (or rounded) to 0
		}
	}
	// With SD 50*2 a count of 1 is pushed below 0 about half the time.
	if negative == 0 {
		t.Error("no answer was clamped at 0")
	}
	if m.Needs() != (ir.Needs{Key: true, Conditions: true, Units: true, Contributions: true}) { // contributions for sums only
		t.Errorf("Needs = %+v", m.Needs())
	}
	if _, err := New("layered", nil, Env{}); err == nil {
		t.Error("layered built without a secret")
	}
	if _, err := New("layered", Params{"noise_layer_sd": -1}, Env{Secret: []byte("s")}); err == nil {
		t.Error("layered accepted a negative SD")
	}
}

func TestLayeredThresholdQuery(t *testing.T) {
	m := newLayeredForTest(t, "s", Params{"noise_layer_sd": 0})
	q := &ir.Query{Threshold: &ir.Threshold{Bound: 99}}
	for _, c := range []struct{ count, want int64 }{{99, 0}, {100, 1}} {
		a := answerWithoutCharge(t, m, layeredRequest(q, []string{"x = 1"}, false, ir.Cell{Count: c.count, Units: c.count, Key: 5, InDomain: true}))[0]
		if a != (Answer{Int: c.want}) {
			t.Errorf("count %d: %+v, want %d", c.count, a, c.want)
		}
	}
}

func TestNoiseMechanismsDescribeAndRefuseMalformed(t *testing.T) {
	for _, name := range []string{"laplace", "gaussian", "idp", "bdp", "layered"} {
		m := newMechanismForTest(t, name, nil, 1)
		d, ok := m.(Describer)
		if !ok || len(d.Describe()) < len(name)+10 || d.Describe()[:len(name)+1] != name+":" {
			t.Errorf("%s: no claim starting %q", name, name+":")
		}
		for _, req := range []*Request{nil, {}, {Query: &ir.Query{}}} {
			_, _, err := m.Answer(context.Background(), req)
			wantPlannerError(t, err, pgerror.InternalError)
		}
	}
}

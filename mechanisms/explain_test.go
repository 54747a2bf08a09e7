package mechanisms

import (
	"context"
	"countwall/ir"
	"fmt"
	"strings"
	"testing"
)

// intervalDraws sizes TestIntervalCoverage: 10,000 answers per case, the
// coverage held to the stated confidence by the Clopper-Pearson upper bound
// at alpha 1e-7 (one-sided, betweenBounds); 8 cases make the false-failure
// rate below 1e-6.
const intervalDraws = 10000

// TestIntervalCoverage: the interval laplace and gaussian give an answer,
// from the library's confidence interval of the noise, holds the true count
// at least at the stated rate, with the library's own (unseeded) noise,
// including at counts where answers are clamped at 0.
func TestIntervalCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: coverage of the library's intervals over unseeded noise: skipped under -short; go test ./... runs it")
	}
	for _, name := range []string{"laplace", "gaussian"} {
		m, err := New(name, nil, Env{})
		if err != nil {
			t.Fatal(err)
		}
		for _, count := range []int64{0, 1000} {
			for _, confidence := range []float64{0.8, 0.95} {
				req := dpRequest(&ir.Query{Table: "people"}, 0.5, 1e-5, false, count)
				inside := 0
				for range intervalDraws {
					answers, _, err := m.Answer(context.Background(), req)
					if err != nil {
						t.Fatal(err)
					}
					lo, hi, ok := Interval(m, req, answers[0], confidence)
					if !ok {
						t.Fatalf("%s: no interval", name)
					}
					if lo <= float64(count) && float64(count) <= hi {
						inside++
					}
				}
				if _, hi := betweenBounds(inside, intervalDraws); hi < confidence {
					t.Errorf("%s count %d: %d of %d intervals at %g held the truth (upper bound %g)", name, count, inside, intervalDraws, confidence, hi)
				}
			}
		}
	}
}

// TestPublishedRangesAlwaysHoldTheTruth: bounded and cellkey, with their
// parameters published, give ranges that hold the truth on every answer;
// with them hidden, no interval and no range in EXPLAIN.
func TestPublishedRangesAlwaysHoldTheTruth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params Params
	}{
		{"bounded", Params{"range": 3, "publish_parameters": true}},
		{"bounded", Params{"range": 3, "publish_parameters": true, "suppress_at": 2}},
		{"cellkey", Params{"D": 2, "publish_parameters": true}},
	} {
		m := newMechanismForTest(t, tc.name, tc.params, 9)
		for count := int64(0); count < 30; count++ {
			req := countCellsRequest(&ir.Query{Table: "people"}, count)
			req.Result.Cells[0].Key = uint32(count * 2654435761)
			for range 200 {
				answers, _, err := m.Answer(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				lo, hi, ok := Interval(m, req, answers[0], 0.95)
				if !ok || float64(count) < lo || float64(count) > hi {
					t.Fatalf("%s %v: count %d answered %+v, interval [%g, %g] (%v)", tc.name, tc.params, count, answers[0], lo, hi, ok)
				}
			}
		}
	}
	for _, name := range []string{"bounded", "cellkey"} {
		m := newMechanismForTest(t, name, nil, 9)
		req := countCellsRequest(&ir.Query{Table: "people"}, 10)
		if _, _, ok := Interval(m, req, Answer{Int: 10}, 0.95); ok {
			t.Errorf("%s states an interval with its parameters hidden", name)
		}
		for _, l := range Explain(m, req) {
			if strings.Contains(l.Text, "[-2, 2]") {
				t.Errorf("%s explains its hidden range: %q", name, l.Text)
			}
		}
	}
}

// TestExplainLines: every mechanism explains itself, and laplace's expected
// error is the library's 95% interval for its scale: at epsilon 0.5 the
// scale is 2 and the interval [-6, 6]; with G = 3 it is 6 and [-18, 18].
func TestExplainLines(t *testing.T) {
	for _, name := range []string{"exact", "suppress", "bounded", "cellkey", "layered", "laplace", "gaussian", "idp", "bdp"} {
		m := newMechanismForTest(t, name, nil, 1)
		req := dpRequest(&ir.Query{Table: "people"}, 0.5, 1e-6, false, 10)
		req.Bounds = ir.DefaultBounds()
		if len(Explain(m, req)) == 0 {
			t.Errorf("%s explains nothing", name)
		}
	}
	m := newMechanismForTest(t, "laplace", nil, 1)
	for _, tc := range []struct {
		g    int64
		want string
	}{{1, "[-6, 6]"}, {3, "[-18, 18]"}} {
		req := dpRequest(&ir.Query{Table: "people"}, 0.5, 1e-6, false, 10)
		req.Bounds = ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: tc.g}
		text := fmt.Sprint(Explain(m, req))
		if !strings.Contains(text, "95% of counts within "+tc.want) {
			t.Errorf("G = %d: %s, want the interval %s", tc.g, text, tc.want)
		}
	}
}

// TestIntervalDependsOnlyOnThePublishedAnswer: an interval is computed from
// the noise parameters and the published answer only, so two answers that
// publish the same count carry the same interval. A 0 published because the
// true count was suppressed (at most s) and a 0 published because noise
// pulled a larger count down must not be told apart by ci_low and ci_high.
func TestIntervalDependsOnlyOnThePublishedAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params Params
	}{
		{"bounded", Params{"range": 3, "publish_parameters": true, "suppress_at": 1}},
		{"bounded", Params{"range": 2, "publish_parameters": true, "suppress_at": 5}},
		{"cellkey", Params{"D": 2, "publish_parameters": true, "suppress_at": 0}},
		{"cellkey", Params{"D": 2, "publish_parameters": true}},
		{"suppress", Params{"threshold": 3}},
	} {
		m := newMechanismForTest(t, tc.name, tc.params, 9)
		type interval struct{ lo, hi float64 }
		seen := map[int64]interval{}
		from := map[int64]int64{}
		for count := int64(0); count < 30; count++ {
			req := countCellsRequest(&ir.Query{Table: "people"}, count)
			for draw := range 200 {
				req.Result.Cells[0].Key = uint32((count*200 + int64(draw)) * 2654435761)
				answers, _, err := m.Answer(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				lo, hi, ok := Interval(m, req, answers[0], 0.95)
				if !ok {
					t.Fatalf("%s %v: no interval for %+v", tc.name, tc.params, answers[0])
				}
				if float64(count) < lo || float64(count) > hi {
					t.Fatalf("%s %v: count %d answered %+v, interval [%g, %g] misses it", tc.name, tc.params, count, answers[0], lo, hi)
				}
				v := answers[0].Int
				if prev, ok := seen[v]; ok && prev != (interval{lo, hi}) {
					t.Fatalf("%s %v: published %d has interval [%g, %g] from count %d and [%g, %g] from count %d",
						tc.name, tc.params, v, prev.lo, prev.hi, from[v], lo, hi, count)
				}
				seen[v], from[v] = interval{lo, hi}, count
			}
		}
	}
}

// TestExplainStatesTheSuppressionInTheError: with suppression on, a count of
// s or less is published as 0, an error of up to s that the noise's range
// alone does not cover; EXPLAIN's expected error says so.
func TestExplainStatesTheSuppressionInTheError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params Params
	}{
		{"bounded", Params{"range": 2, "publish_parameters": true, "suppress_at": 4}},
		{"cellkey", Params{"D": 2, "publish_parameters": true, "suppress_at": 4}},
	} {
		m := newMechanismForTest(t, tc.name, tc.params, 9)
		req := countCellsRequest(&ir.Query{Table: "people"}, 4)
		text := fmt.Sprint(Explain(m, req))
		if strings.Contains(text, "always within [-2, 2]") && !strings.Contains(text, "4 or less") {
			t.Errorf("%s %v: %s, which a count of 4 published as 0 contradicts", tc.name, tc.params, text)
		}
	}
}

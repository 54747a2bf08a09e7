package attacks

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// What the targeted attacks on idp share (idp_membership.go,
// idp_uniqueness.go, idp_attribute.go; REFERENCES.md [PDKDZ24], sections
// 3.5, 6.2, 6.3). Each asks a
// threshold query `SELECT COUNT(*) > b FROM t WHERE pred` about the rows
// matching a target individual's known attributes (Target.Where), at a tiny
// epsilon share, and reads whether the answer carried noise (Lemma 3.3, the
// outcome model at the top of threshold.go):
//
//   - idp-membership (Example 3.9): b = k-1 and b = k. A person unique in the
//     population is in the table iff the second answer is noisy. 2 queries.
//   - idp-uniqueness (Example 3.8): b = k and b = k+1. The known attributes
//     single out exactly one row iff the first is noisy and the second the
//     exact 0. 2 queries.
//   - idp-attribute (Example 3.10): for a person known to be in the table and
//     unique on the known attributes, a binary search over an attribute's
//     public domain, one probe at b = k per step on "known attributes AND
//     value in the lower half": a count of 1 is noisy, a count of 0 the exact
//     0. About log2(domain size) queries: one per bit of the value.
//
// Against a firewall that answers threshold queries truthfully (exact, k = 0)
// the same reading holds with k = 0: membership asks the same 2 queries and
// reads the plain answer at b = 0, uniqueness asks b = 0 and b = 1, and the
// attribute search probes at b = 0. Any other firewall's plain 0s and 1s are
// not the truth: against laplace (a thresholded noisy count) each is, at an
// epsilon of 1e-10, a coin flip. There the attacks recover nothing
// (Undecided) and report what the answers would say read as exact as a
// guess (Details["guess"] and the note), or that they contradict the model.
// A user who gives k (GroupK >= 0) vouches for the model, and the reading
// then counts as recovered whatever the firewall.
//
// These attacks never search for the table size: they probe at b <= k+1 and
// assume the table has more than k+1 rows (the paper needs n >= 2k).

// demoPerson is a person of the demo people table (`countwall gen people
// --rows 20000`, seed 1: id 2, income 128,500) whose suburb, age and sex no
// one else in the table shares.
const demoPerson = "suburb = 'suburb_0163' AND age = 65 AND sex = 'M'"

// targetTest is one of the two-query tests.
type targetTest int

const (
	membership targetTest = iota
	uniqueness
)

// thresholds are the test's two thresholds under group size k.
func (t targetTest) thresholds(k int64) [2]int64 {
	if t == membership {
		return membershipThresholds(k)
	}
	return uniquenessThresholds(k)
}

// scriptK is the group size a script is written for: the one given, or
// idp's default of 1 when the attack would ask the firewall.
func scriptK(o Options) int64 {
	if o.Threshold.GroupK >= 0 {
		return o.Threshold.GroupK
	}
	return 1
}

// thresholdSQL renders `SELECT COUNT(*) > b FROM table [WHERE where]`, as
// ThresholdOracle.Probe sends it.
func thresholdSQL(table, where string, b int64) string {
	s := "SELECT COUNT(*) > " + strconv.FormatInt(b, 10) + " FROM " + table
	if where != "" {
		s += " WHERE " + where
	}
	return s
}

// andWhere is "(base) AND extra", or extra alone when base is empty.
func andWhere(base, extra string) string {
	if base == "" {
		return extra
	}
	return "(" + base + ") AND " + extra
}

// targetScript is the whole SQL of a two-query test.
func targetScript(o Options, bs [2]int64) []string {
	var out []string
	if s := shareStatement(o.Threshold.Epsilon); s != "" {
		out = append(out, s)
	}
	for _, b := range bs {
		out = append(out, thresholdSQL(o.Target.Table, o.Target.Where, b))
	}
	return out
}

// targetSession is how a targeted attack meets the firewall.
type targetSession struct {
	oracle *ThresholdOracle
	share  float64 // the epsilon each query is charged
	note   string  // what went other than asked
	// mechanism is what the firewall says it runs ("" when it will not
	// say), and given whether the attack was told k (GroupK >= 0).
	mechanism string
	given     bool
}

// notes joins the session's note with what the attack found.
func (s *targetSession) notes(found string) string {
	if s.note == "" {
		return found
	}
	if found == "" {
		return s.note
	}
	return s.note + "; " + found
}

// certain reports whether the model's reading of the answers holds: the
// firewall runs idp (noise reveals the sensitivity) or exact (k = 0: the
// plain 0 or 1 is the truth), or the user gave k and so vouched for the
// model. Any other firewall's 0s and 1s (laplace thresholds a noisy count)
// are not the truth, and what they say is only a guess.
func (s *targetSession) certain() bool {
	return s.given || s.mechanism == "idp" || s.mechanism == "exact"
}

// conclude records what the attack found: as recovered when the reading is
// certain, else as a guess (Details["guess"]) with nothing recovered.
func (s *targetSession) conclude(res *Result, value int64, found string, certain bool) {
	if certain {
		res.Recovered, res.Estimate, res.Undecided = value, float64(value), false
		res.Note = s.notes(found)
		return
	}
	res.Recovered, res.Estimate, res.Undecided = 0, 0, true
	res.Details["guess"] = value
	res.Note = s.notes(fmt.Sprintf("no verdict: the firewall runs %s, whose answers this attack cannot read with certainty; read as exact they say: %s",
		cmp.Or(s.mechanism, "an unnamed mechanism"), found))
}

// openTarget asks for the share and settles k (from SHOW mechanism when
// GroupK < 0: 1 under idp, 0 under anything else), without searching for the
// table size.
func openTarget(ctx context.Context, q Querier, o Options) (*targetSession, error) {
	if !IsIdentifier(o.Target.Table) {
		return nil, fmt.Errorf("table %q is not a plain SQL identifier", o.Target.Table)
	}
	ts := &targetSession{given: o.Threshold.GroupK >= 0}
	rows := o.Threshold.Rows
	if rows <= 0 {
		rows = math.MaxInt64 // unknown, and assumed to exceed k+1
	}
	oracle, err := NewThresholdOracle(ctx, q, o.Target.Table, ThresholdSetup{GroupK: o.Threshold.GroupK, Epsilon: o.Threshold.Epsilon, Rows: rows})
	if err != nil {
		return nil, err
	}
	ts.oracle, ts.share, ts.note, ts.mechanism = oracle, oracle.Share, oracle.Note, oracle.Mechanism
	return ts, nil
}

// probeSQL sends one threshold query and classifies the answer.
func probeSQL(ctx context.Context, q Querier, sqlText string) (Outcome, float64, error) {
	v, err := Count(ctx, q, sqlText)
	if err != nil {
		return 0, 0, err
	}
	return classify(v), v, nil
}

// countRange renders what a test learnt about the target's count.
func countRange(lo, hi int64) string {
	switch {
	case lo > hi:
		return "none (the answers contradict the model)"
	case lo == hi:
		return strconv.FormatInt(lo, 10)
	case hi == math.MaxInt64:
		return fmt.Sprintf("at least %d", lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// targetReading is what a two-query test learnt: the count of rows
// matching the target lies in [lo, hi] (lo > hi when the answers contradict
// the model). stopped is the refusal or query limit that ended the test
// before its second answer, nil when both came.
type targetReading struct {
	thresholds [2]int64
	lo, hi     int64
	outcomes   []string
	answers    []float64
	stopped    error
}

// ask sends the test's two threshold queries about the target and reads the
// count's range off their outcomes.
func (t targetTest) ask(ctx context.Context, q Querier, o Options, ts *targetSession) (*targetReading, error) {
	r := &targetReading{thresholds: t.thresholds(ts.oracle.K), lo: 0, hi: math.MaxInt64}
	for _, b := range r.thresholds {
		out, v, err := probeSQL(ctx, q, thresholdSQL(o.Target.Table, o.Target.Where, b))
		if err != nil {
			if Stopped(err) {
				r.stopped = err
				return r, nil
			}
			return nil, err
		}
		r.outcomes = append(r.outcomes, out.String())
		r.answers = append(r.answers, v)
		r.lo, r.hi = bounds(r.lo, r.hi, b, ts.oracle.K, out)
	}
	return r, nil
}

// done reports whether both answers came.
func (r *targetReading) done() bool { return r.stopped == nil && len(r.outcomes) == len(r.thresholds) }

// details are the reading as a result's Details show it.
func (r *targetReading) details(k int64, share float64) map[string]any {
	return map[string]any{
		"k": k, "thresholds": r.thresholds[:], "outcomes": r.outcomes, "answers": r.answers,
		"epsilon_share": share, "count": countRange(r.lo, r.hi),
	}
}

// how renders the outcomes beside their thresholds: "noisy at b = 1, below
// at b = 2".
func (r *targetReading) how() string {
	parts := make([]string, len(r.outcomes))
	for i, out := range r.outcomes {
		parts[i] = fmt.Sprintf("%s at b = %d", out, r.thresholds[i])
	}
	return strings.Join(parts, ", ")
}

// run asks the test's two threshold queries and reads the count's range off
// their outcomes. Recovered is 1 (member, or unique), 0 (not); no verdict (Undecided) when
// the answers contradict the model or the firewall stopped the test.
func (t targetTest) run(ctx context.Context, q Querier, o Options) (*Result, error) {
	ts, err := openTarget(ctx, q, o)
	if err != nil {
		return nil, err
	}
	or := ts.oracle
	res := &Result{Undecided: true}
	r, err := t.ask(ctx, q, o, ts)
	if err != nil {
		return nil, err
	}
	res.Details = r.details(or.K, ts.share)
	if !r.done() {
		res.Note = ts.notes(fmt.Sprintf("stopped after %d queries, before a verdict: %v", len(r.outcomes), r.stopped))
		return res, nil
	}
	var verdict string
	var value int64
	switch {
	case r.lo > r.hi:
		or.Inconsistent++
		res.Note = ts.notes(fmt.Sprintf("no verdict: the answers (%s) contradict the model of a firewall with k = %d", strings.Join(r.outcomes, ", "), or.K))
		res.Details["verdict"] = "inconclusive"
		return res, nil
	case t == membership && r.lo >= 1:
		value, verdict = 1, "in the table"
	case t == membership:
		value, verdict = 0, "not in the table"
	case r.lo == 1 && r.hi == 1:
		value, verdict = 1, "unique"
	default:
		value, verdict = 0, "not unique"
	}
	res.Details["verdict"] = verdict
	ts.conclude(res, value, fmt.Sprintf("%s: rows matching the target: %s (%s)", verdict, countRange(r.lo, r.hi), r.how()), ts.certain())
	return res, nil
}

// score reads the target's true count: the person is a member when it is at
// least 1, unique when it is exactly 1.
func (t targetTest) score(ctx context.Context, path string, o Options, r *Result) error {
	c, err := TrueCount(ctx, path, o.Target)
	if err != nil {
		return err
	}
	truth := int64(0)
	if (t == membership && c >= 1) || (t == uniqueness && c == 1) {
		truth = 1
	}
	setVerdictScore(r, truth)
	if r.Details == nil {
		r.Details = map[string]any{}
	}
	r.Details["true_count"] = c
	return nil
}

// setVerdictScore scores a result whose Recovered is a verdict or a value.
func setVerdictScore(r *Result, truth int64) {
	exact := !r.Undecided && r.Recovered == truth
	success := 0.0
	if exact {
		success = 1
	}
	r.Truth, r.Exact, r.Success = &truth, &exact, &success
}

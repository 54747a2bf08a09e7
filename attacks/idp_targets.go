package attacks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The targeted attacks on idp (Protivash et al. 3.5, 6.2, 6.3): each asks a
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
// (Recovered -1) and report what the answers would say read as exact as a
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

var IDPMembership = &Attack{
	Name:    "idp-membership",
	Against: "idp",
	Source:  "Protivash et al. Ex. 3.9, Table 2",
	Summary: "whether a person unique in the population is in the table, in 2 threshold queries at almost no claimed epsilon",
	Script:  func(o Options) []string { return targetScript(o, membershipThresholds(scriptK(o))) },
	Run:     membership.run,
	Score:   membership.score,
	Flags:   thresholdFlags,
	Demo: func() Options {
		// The demo person is in the table; a year younger no one is:
		// --where "suburb = 'suburb_0163' AND age = 64 AND sex = 'M'"
		// shows the other verdict.
		return Options{Target: Target{Table: "people", Where: demoPerson}, Threshold: ThresholdSetup{GroupK: -1}}
	},
}

var IDPUniqueness = &Attack{
	Name:    "idp-uniqueness",
	Against: "idp",
	Source:  "Protivash et al. Ex. 3.8",
	Summary: "whether known attributes single out exactly one row, in 2 threshold queries at almost no claimed epsilon",
	Script:  func(o Options) []string { return targetScript(o, uniquenessThresholds(scriptK(o))) },
	Run:     uniqueness.run,
	Score:   uniqueness.score,
	Flags:   thresholdFlags,
	Demo: func() Options {
		return Options{Target: Target{Table: "people", Where: demoPerson}, Threshold: ThresholdSetup{GroupK: -1}}
	},
}

var IDPAttribute = &Attack{
	Name:    "idp-attribute",
	Against: "idp",
	Source:  "Protivash et al. Ex. 3.10, Table 3",
	Summary: "a unique person's value of one attribute by binary search over its domain, one threshold query per bit",
	Run:     runAttribute,
	Score:   scoreAttribute,
	Flags:   thresholdFlags,
	Demo: func() Options {
		// Income is public as 0..500,000 (19 bits): 18 or 19 queries.
		return Options{
			Target:    Target{Table: "people", Where: demoPerson},
			Threshold: ThresholdSetup{GroupK: -1},
			Domains:   []Domain{{Column: "income", Lo: 0, Hi: 500000}},
		}
	},
}

func init() {
	register(IDPMembership)
	register(IDPUniqueness)
	register(IDPAttribute)
}

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

// membershipThresholds are b = k-1 and b = k. Under exact (k = 0) they are
// the same 0 and 1 as under idp with k = 1: b = -1 would say nothing.
func membershipThresholds(k int64) [2]int64 {
	k = max(k, 1)
	return [2]int64{k - 1, k}
}

// uniquenessThresholds are b = k and b = k+1.
func uniquenessThresholds(k int64) [2]int64 { return [2]int64{k, k + 1} }

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
	res.Recovered, res.Estimate, res.Undecided = -1, -1, true
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

// run asks the test's two threshold queries and reads the count's range off
// their outcomes. Recovered is 1 (member, or unique), 0 (not), or -1 when
// the answers contradict the model or the firewall stopped the test.
func (t targetTest) run(ctx context.Context, q Querier, o Options) (*Result, error) {
	ts, err := openTarget(ctx, q, o)
	if err != nil {
		return nil, err
	}
	or := ts.oracle
	bs := t.thresholds(or.K)
	res := &Result{Recovered: -1, Estimate: -1, Undecided: true}
	lo, hi := int64(0), int64(math.MaxInt64)
	var outcomes []string
	var answers []float64
	for _, b := range bs {
		out, v, err := probeSQL(ctx, q, thresholdSQL(o.Target.Table, o.Target.Where, b))
		if err != nil {
			if Stopped(err) {
				res.Note = ts.notes(fmt.Sprintf("stopped after %d queries, before a verdict: %v", len(outcomes), err))
				break
			}
			return nil, err
		}
		outcomes = append(outcomes, out.String())
		answers = append(answers, v)
		lo, hi = bounds(lo, hi, b, or.K, out)
	}
	res.Details = map[string]any{
		"k": or.K, "thresholds": bs[:], "outcomes": outcomes, "answers": answers,
		"epsilon_share": ts.share, "count": countRange(lo, hi),
	}
	if len(outcomes) < len(bs) {
		return res, nil
	}
	var verdict string
	var value int64
	switch {
	case lo > hi:
		or.Inconsistent++
		res.Note = ts.notes(fmt.Sprintf("no verdict: the answers (%s) contradict the model of a firewall with k = %d", strings.Join(outcomes, ", "), or.K))
		res.Details["verdict"] = "inconclusive"
		return res, nil
	case t == membership && lo >= 1:
		value, verdict = 1, "in the table"
	case t == membership:
		value, verdict = 0, "not in the table"
	case lo == 1 && hi == 1:
		value, verdict = 1, "unique"
	default:
		value, verdict = 0, "not unique"
	}
	res.Details["verdict"] = verdict
	ts.conclude(res, value, fmt.Sprintf("%s: rows matching the target: %s (%s at b = %d, %s at b = %d)",
		verdict, countRange(lo, hi), outcomes[0], bs[0], outcomes[1], bs[1]), ts.certain())
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
	exact := r.Recovered == truth
	success := 0.0
	if exact {
		success = 1
	}
	r.Truth, r.Exact, r.Success = &truth, &exact, &success
}

// runAttribute is Example 3.10: a binary search over the domain of
// Domains[0] for the target's value, one probe at b = k per step.
func runAttribute(ctx context.Context, q Querier, o Options) (*Result, error) {
	if len(o.Domains) == 0 {
		return nil, errors.New("idp-attribute needs the public domain of the attribute to infer (--domain col=lo..hi or col=a,b,c)")
	}
	d := o.Domains[0]
	if !IsIdentifier(d.Column) || d.Size() < 1 {
		return nil, fmt.Errorf("domain of %q: a plain column name and at least one value are needed", d.Column)
	}
	ts, err := openTarget(ctx, q, o)
	if err != nil {
		return nil, err
	}
	b := ts.oracle.K
	res := &Result{Recovered: -1, Estimate: -1, Undecided: true}
	lo, hi := int64(0), d.Size() // the value is one of lo..hi-1
	var steps []string
	inconsistent := 0
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		where := andWhere(o.Target.Where, d.Range(lo, mid))
		out, _, err := probeSQL(ctx, q, thresholdSQL(o.Target.Table, where, b))
		if err != nil {
			if Stopped(err) {
				between := fmt.Sprintf("the value is between %s and %s", literalText(d.Literal(lo)), literalText(d.Literal(hi-1)))
				if !ts.certain() {
					between = "read as exact, the answers put the value between " + between[len("the value is between "):]
				}
				res.Note = ts.notes(fmt.Sprintf("stopped after %d queries: %v; %s", len(steps), err, between))
				break
			}
			return nil, err
		}
		steps = append(steps, d.Range(lo, mid)+": "+out.String())
		// A count of 0 in the lower half is the exact 0; a count of 1 is
		// noisy under idp (1 <= 1 <= 2k) and the exact 1 under exact. Any
		// other outcome says the target is not one row (Above under idp:
		// count > 2k; Noisy under k = 0): it is taken as "in the half".
		if out == Below {
			lo = mid
		} else {
			hi = mid
			if (out == Above) != (b == 0) {
				inconsistent++
			}
		}
		if o.Progress != nil {
			o.Progress(len(steps), bitsFor(d.Size()))
		}
	}
	res.Details = map[string]any{
		"column": d.Column, "domain_size": d.Size(), "bits": bitsFor(d.Size()), "k": ts.oracle.K, "threshold": b,
		"epsilon_share": ts.share, "probes": steps,
	}
	if hi-lo > 1 {
		return res, nil
	}
	value := literalText(d.Literal(lo))
	res.Details["value"] = value
	found := fmt.Sprintf("%s = %s, in %d queries for a domain of %d values", d.Column, value, len(steps), d.Size())
	if inconsistent > 0 {
		res.Details["inconsistent"] = inconsistent
		found += fmt.Sprintf("; %d answers contradict a unique target under k = %d", inconsistent, ts.oracle.K)
	}
	ts.conclude(res, domainNumber(d, lo), found, ts.certain())
	return res, nil
}

// domainNumber is what Recovered holds for the i-th value of a domain: the
// value itself for an integer domain, its index for categories.
func domainNumber(d Domain, i int64) int64 {
	if d.Categories != nil {
		return i
	}
	return d.Lo + i
}

// bitsFor is ceil(log2(size)): the probes a binary search over size values
// needs at most.
func bitsFor(size int64) int {
	bits := 0
	for s := int64(1); s < size; s <<= 1 {
		bits++
	}
	return bits
}

// scoreAttribute reads the target's true value of the attribute. The target
// must be exactly one row of the truth; otherwise the attack's premise fails
// and nothing counts as recovered.
func scoreAttribute(ctx context.Context, path string, o Options, r *Result) error {
	if len(o.Domains) == 0 {
		return errors.New("idp-attribute: no domain to score")
	}
	d := o.Domains[0]
	hist, err := TrueHistogram(ctx, path, o.Target, d.Column)
	if err != nil {
		return err
	}
	var vals []string
	for v, n := range hist {
		for range n {
			vals = append(vals, v)
		}
	}
	if r.Details == nil {
		r.Details = map[string]any{}
	}
	r.Details["true_rows"] = len(vals)
	if len(vals) != 1 {
		exact, success := false, 0.0
		r.Exact, r.Success = &exact, &success
		r.Note = strings.TrimPrefix(r.Note+fmt.Sprintf("; the target is %d rows of the truth, not one", len(vals)), "; ")
		return nil
	}
	r.Details["true_value"] = vals[0]
	truth := int64(-1)
	if d.Categories != nil {
		if i := slices.Index(d.Categories, vals[0]); i >= 0 {
			truth = int64(i)
		}
	} else if v, err := strconv.ParseInt(vals[0], 10, 64); err == nil {
		truth = v
	}
	setVerdictScore(r, truth)
	return nil
}

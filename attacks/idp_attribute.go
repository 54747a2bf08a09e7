package attacks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// IDPAttribute is Protivash et al.'s Example 3.10 (REFERENCES.md [PDKDZ24]),
// for a person known to be in the table and unique on the known attributes:
//
//  0. Check that premise first with idp-uniqueness's two queries (Example
//     3.8): a target matching no row, or several, would steer the search to
//     a value no one has (the domain's top, for no row) or to one of several
//     people's, read with the same confidence. When the check fails the
//     attack stops there with no verdict and says why.
//  1. Take the attribute's public domain (Domains[0]) as the interval to
//     search.
//  2. Probe COUNT(*) > k on "known attributes AND value in the lower half":
//     a count of 1 answers noisy, a count of 0 the exact 0.
//  3. Keep the half the answer points to and repeat: one query per bit of
//     the value, ceil(log2(domain size)) at most.
var IDPAttribute = &Attack{
	Name:    "idp-attribute",
	Against: "idp",
	Source:  "Protivash et al. Ex. 3.10, Table 3",
	Summary: "a unique person's value of one attribute by binary search over its domain, one threshold query per bit, after a 2-query check that the target is one person",
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

func init() { register(IDPAttribute) }

// runAttribute is Example 3.10: a binary search over the domain of
// Domains[0] for the target's value, one probe at b = k per step.
func runAttribute(ctx context.Context, q Querier, o Options) (*Result, error) {
	if len(o.Domains) == 0 {
		return nil, errors.New("idp-attribute needs the public domain of the attribute to infer (--domain col=lo..hi or col=a,b,c)")
	}
	d := o.Domains[0]
	if d.Column == "" || d.Size() < 1 {
		return nil, fmt.Errorf("domain of %q: a column name and at least one value are needed", d.Column)
	}
	ts, err := openTarget(ctx, q, o)
	if err != nil {
		return nil, err
	}
	b := ts.oracle.K
	res := &Result{Undecided: true}
	check, err := uniqueness.ask(ctx, q, o, ts)
	if err != nil {
		return nil, err
	}
	// The check's answers count among the run's queries; Details say how
	// many of them it took.
	checked := check.details(ts.oracle.K, ts.share)
	res.Details = map[string]any{
		"column": d.Column, "domain_size": d.Size(), "bits": bitsFor(d.Size()), "k": ts.oracle.K, "threshold": b,
		"epsilon_share": ts.share, "uniqueness": checked, "uniqueness_queries": len(check.outcomes),
	}
	if why := notOnePerson(check, ts); why != "" {
		checked["verdict"] = "failed"
		res.Note = ts.notes(why)
		return res, nil
	}
	checked["verdict"] = "unique"
	unique := fmt.Sprintf("unique (%s), then ", check.how())
	search := &domainSearch{d: d, hi: d.Size()}
	if err := search.run(ctx, q, o, ts, b, unique, res); err != nil {
		return nil, err
	}
	res.Details["probes"] = search.steps
	if search.hi-search.lo > 1 {
		return res, nil
	}
	value := literalText(d.Literal(search.lo))
	res.Details["value"] = value
	found := fmt.Sprintf("%s%s = %s, in %d queries for a domain of %d values", unique, d.Column, value, len(search.steps), d.Size())
	if search.inconsistent > 0 {
		res.Details["inconsistent"] = search.inconsistent
		found += fmt.Sprintf("; %d answers contradict a unique target under k = %d", search.inconsistent, ts.oracle.K)
	}
	ts.conclude(res, domainNumber(d, search.lo), found, ts.certain())
	return res, nil
}

// domainSearch is the binary search of Example 3.10 over a domain: the
// value is one of lo..hi-1.
type domainSearch struct {
	d            Domain
	lo, hi       int64
	steps        []string // each probe and its outcome
	inconsistent int      // outcomes a unique target cannot give
}

// run probes the lower half of lo..hi-1 at threshold b until one value is
// left. When the firewall stops it first, res.Note says where the value is.
func (s *domainSearch) run(ctx context.Context, q Querier, o Options, ts *targetSession, b int64, unique string, res *Result) error {
	d := s.d
	for s.hi-s.lo > 1 {
		mid := s.lo + (s.hi-s.lo)/2
		where := andWhere(o.Target.Where, d.Range(s.lo, mid))
		out, _, err := probeSQL(ctx, q, thresholdSQL(o.Target.Table, where, b))
		if err != nil {
			if Stopped(err) {
				between := fmt.Sprintf("the value is between %s and %s", literalText(d.Literal(s.lo)), literalText(d.Literal(s.hi-1)))
				if !ts.certain() {
					between = "read as exact, the answers put the value between " + between[len("the value is between "):]
				}
				res.Note = ts.notes(fmt.Sprintf("%sstopped after %d queries of the search: %v; %s", unique, len(s.steps), err, between))
				return nil
			}
			return err
		}
		s.steps = append(s.steps, d.Range(s.lo, mid)+": "+out.String())
		// A count of 0 in the lower half is the exact 0; a count of 1 is
		// noisy under idp (1 <= 1 <= 2k) and the exact 1 under exact. Any
		// other outcome says the target is not one row (Above under idp:
		// count > 2k; Noisy under k = 0): it is taken as "in the half".
		if out == Below {
			s.lo = mid
		} else {
			s.hi = mid
			if (out == Above) != (b == 0) {
				s.inconsistent++
			}
		}
		if o.Progress != nil {
			o.Progress(len(s.steps), bitsFor(d.Size()))
		}
	}
	return nil
}

// notOnePerson says why the uniqueness check does not let the search go
// on, or "" when the target is one row. Against a firewall whose answers
// the attack cannot read with certainty (laplace), a failed check is as
// much a guess as a passed one, and the note says so.
func notOnePerson(r *targetReading, ts *targetSession) string {
	if !r.done() {
		return fmt.Sprintf("stopped after %d queries, before the uniqueness check was done: %v", len(r.outcomes), r.stopped)
	}
	var why string
	switch {
	case r.lo == 1 && r.hi == 1:
		return ""
	case r.lo > r.hi:
		ts.oracle.Inconsistent++
		why = fmt.Sprintf("not unique: the uniqueness check's answers (%s) contradict the model of a firewall with k = %d", r.how(), ts.oracle.K)
	case r.hi == 0:
		why = fmt.Sprintf("0 rows match the target (uniqueness check: %s): no one to infer a value of", r.how())
	case r.lo >= 2:
		why = fmt.Sprintf("several rows match the target (%s; uniqueness check: %s), not one person: the search would read their values together", countRange(r.lo, r.hi), r.how())
	default:
		why = fmt.Sprintf("not unique: the rows matching the target number %s (uniqueness check: %s)", countRange(r.lo, r.hi), r.how())
	}
	if !ts.certain() {
		return fmt.Sprintf("no verdict: the firewall runs %s, whose answers this attack cannot read with certainty; read as exact they say: %s",
			cmp.Or(ts.mechanism, "an unnamed mechanism"), why)
	}
	return "no verdict, no search: " + why
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

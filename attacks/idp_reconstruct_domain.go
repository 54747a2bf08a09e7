package attacks

import (
	"context"
	"fmt"
	"strings"

	"countwall/pglex"
)

// OutsideDomain is what the domain check found at one end of a column's
// domain: Rows of the target's rows lie beyond it (below the low end, above
// the high end) and were counted as the boundary value.
type OutsideDomain struct {
	Column   string `json:"column"`
	End      string `json:"end"` // "low" or "high"
	Boundary string `json:"boundary"`
	Rows     int64  `json:"rows"`
	// Categorical says the domain is a list of text values, whose ends are
	// in SQLite's sort order.
	Categorical bool `json:"categorical,omitempty"`
}

// checkDomain asks, at each end of d (the ci-th column) whose boundary value
// the split gave rows, how many of the target's rows lie beyond that end: a
// domain narrower than the data folds them into the boundary value, and the
// rows recovered are then wrong. One threshold query at b = k settles "none"
// (the exact 0, the usual case); otherwise a search counts them, in [1, the
// rows the boundary value got]. Ends whose value holds no rows cost nothing:
// no row can lie beyond them.
func (r *reconstruction) checkDomain(ctx context.Context, d Domain, ci int, groups []recGroup) ([]OutsideDomain, error) {
	var atLow, atHigh int64
	for _, g := range groups {
		if g.vals[ci] == 0 {
			atLow += g.count
		}
		if g.vals[ci] == d.Size()-1 {
			atHigh += g.count
		}
	}
	var out []OutsideDomain
	for _, end := range []struct {
		name  string
		rows  int64
		index int64
		op    string
	}{{"low", atLow, 0, " < "}, {"high", atHigh, d.Size() - 1, " > "}} {
		if end.rows == 0 {
			continue
		}
		where := reconAnd(r.where(recGroup{}), pglex.QuoteIdent(d.Column)+end.op+d.Literal(end.index))
		before := r.q.sent()
		n, err := r.countAtMost(ctx, where, end.rows)
		r.checkQueries += r.q.sent() - before
		if err != nil {
			return out, err
		}
		if n > 0 {
			out = append(out, OutsideDomain{Column: d.Column, End: end.name, Boundary: reconValue(d, end.index), Rows: n, Categorical: d.Categories != nil})
		}
	}
	return out, nil
}

// countAtMost counts the rows where selects, known to be at most hi, in one
// query when there are none.
func (r *reconstruction) countAtMost(ctx context.Context, where string, hi int64) (int64, error) {
	k := r.oracle.K
	out, err := r.oracle.Probe(ctx, where, k)
	if err != nil {
		return 0, err
	}
	l, h := bounds(0, hi, k, k, out)
	switch {
	case l > h: // contradicts the model: the nearest bound, as Count does
		r.oracle.Inconsistent++
		if h < 0 {
			return 0, nil
		}
		return hi, nil
	case l == h:
		return l, nil
	}
	return r.oracle.Count(ctx, where, l, h)
}

// outsideNote tells the user which domains look too narrow, at which end,
// and how many rows each folded into its boundary value.
func outsideNote(found []OutsideDomain) string {
	parts := make([]string, len(found))
	for i, f := range found {
		side := map[bool]string{false: "below", true: "above"}[f.End == "high"]
		boundary := f.Boundary
		if f.Categorical {
			side = map[bool]string{false: "sorting before", true: "sorting after"}[f.End == "high"]
			boundary = Literal(f.Boundary)
		}
		parts[i] = fmt.Sprintf("the domain of %s looks too narrow at its %s end: %d of the target's rows have %s %s %s and were counted as %s",
			f.Column, f.End, f.Rows, f.Column, side, boundary, boundary)
	}
	return "Rows were folded into boundary values: " + strings.Join(parts, "; ") + " (give a wider --domain)."
}

package attacks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"countwall/pglex"
)

// Threshold queries, `SELECT COUNT(*) > b FROM t WHERE pred`, are the
// attacker's tool against mechanisms whose noise depends on the data
// (Protivash et al. section 3). Under idp the k-local sensitivity of such a
// query is 1 exactly when max(c-k, 0) <= b < min(c+k, n) for the true count c
// and the table size n (Lemma 3.3), and the exact 0 or 1 is published
// otherwise. With a tiny epsilon share the noise is enormous, so one answer
// tells which case holds, and each case bounds c:
//
//	exact 0 (Below):  c <= b-k
//	noisy (Noisy):    b-k+1 <= c <= b+k
//	exact 1 (Above):  c >= b+k+1
//
// A firewall that answers truthfully (exact) is the same model with k = 0:
// never noisy, Below means c <= b and Above c >= b+1. These bounds hold for
// 0 <= b < n; the attacks never ask outside that range.

// Outcome is what one threshold answer says about a count.
type Outcome int

const (
	Below Outcome = iota // the exact answer 0
	Noisy                // a noisy answer: the sensitivity was not 0
	Above                // the exact answer 1
)

func (o Outcome) String() string {
	switch o {
	case Below:
		return "below"
	case Noisy:
		return "noisy"
	}
	return "above"
}

// DefaultThresholdEpsilon is the per-query epsilon share the threshold
// attacks ask for (SET epsilon): the paper's 1e-10, under which a noisy
// answer is off by about 1e10 and cannot be mistaken for 0 or 1.
const DefaultThresholdEpsilon = 1e-10

// ThresholdOracle asks threshold queries over one table and classifies the
// answers. Its zero value is not usable; build it with NewThresholdOracle.
type ThresholdOracle struct {
	q     Querier
	table string
	// K is the group size of the model: the firewall's idp k, or 0 for a
	// firewall that answers threshold queries with a plain 0 or 1.
	K int64
	// N is the table size.
	N int64
	// Inconsistent counts searches whose answers contradicted the model (a
	// firewall that is not what the attack assumed, such as laplace, whose
	// thresholded noisy counts look exact but are sometimes wrong).
	Inconsistent int
	// Share is the epsilon each query is charged; Note says what did not go
	// as the attack asked: an epsilon share the firewall refused, so that
	// the session's own share is used instead.
	Share float64
	Note  string
	// Mechanism is what the firewall says it runs (SHOW mechanism), "" when
	// it will not say.
	Mechanism string

	// askedShare is the setup's epsilon share, asked again on every further
	// connection (Through).
	askedShare float64
}

// Through is a view of o over another connection q to the same firewall, for
// a worker searching beside o: K, N, the share and the mechanism are o's,
// the session's epsilon share is asked for on q as it was on o's, and
// Inconsistent starts at 0 (the caller adds it to o's). A view is used by
// one goroutine at a time.
func (o *ThresholdOracle) Through(ctx context.Context, q Querier) (*ThresholdOracle, error) {
	v := *o
	v.q, v.Inconsistent = q, 0
	if _, _, err := askShare(ctx, q, o.askedShare); err != nil {
		return nil, err
	}
	return &v, nil
}

// via is a view of o over q, a further way to the same session (a slot of
// a lockstep over o's connection): nothing is asked on q, and Inconsistent
// starts at 0 (the caller adds it to o's).
func (o *ThresholdOracle) via(q Querier) *ThresholdOracle {
	v := *o
	v.q, v.Inconsistent = q, 0
	return &v
}

// ThresholdSetup says how a threshold attack meets the firewall.
type ThresholdSetup struct {
	// GroupK is the idp group size k the attack assumes; negative means "ask
	// the firewall": k = 1 under idp (SHOW mechanism), 0 under anything else.
	GroupK int64
	// Epsilon is the per-query share to ask for (SET epsilon); 0 means
	// DefaultThresholdEpsilon, negative leaves the session's share alone.
	Epsilon float64
	// Rows is the table size when the attacker knows it (the paper assumes it
	// is public); 0 means find it with threshold queries.
	Rows int64
}

// NewThresholdOracle sets the session's epsilon share, settles the model's k
// and learns the table size.
func NewThresholdOracle(ctx context.Context, q Querier, table string, s ThresholdSetup) (*ThresholdOracle, error) {
	if !IsIdentifier(table) {
		return nil, fmt.Errorf("table %q is not a plain SQL identifier", table)
	}
	o := &ThresholdOracle{q: q, table: table, K: s.GroupK, askedShare: s.Epsilon}
	share, note, err := askShare(ctx, q, s.Epsilon)
	if err != nil {
		return nil, err
	}
	o.Share, o.Note = share, note
	o.Mechanism = mechanismName(ctx, q)
	if o.K < 0 {
		o.K = 0
		if o.Mechanism == "idp" {
			o.K = 1
		}
	}
	o.N = s.Rows
	if o.N <= 0 {
		n, err := o.tableSize(ctx)
		if err != nil {
			return nil, err
		}
		o.N = n
	}
	return o, nil
}

// shareStatement is the SET that asks for a per-query epsilon share, or ""
// when the share is left alone (negative).
func shareStatement(eps float64) string {
	if eps == 0 {
		eps = DefaultThresholdEpsilon
	}
	if eps < 0 {
		return ""
	}
	return "SET epsilon = " + strconv.FormatFloat(eps, 'g', -1, 64)
}

// askShare sets the session's per-query epsilon share (0: the default of
// 1e-10; negative: leave it) and returns the share the queries will be
// charged. SET epsilon is a session statement, not a query: like SHOW
// mechanism and SHOW budget it is not counted, but it is written to the SQL
// log so that the log still replays in psql with the same share. A firewall
// that refuses the share (a configured minimum, say) leaves the session's
// own, read with SHOW epsilon; note says so.
func askShare(ctx context.Context, q Querier, eps float64) (share float64, note string, err error) {
	if stmt := shareStatement(eps); stmt != "" {
		if eps == 0 {
			eps = DefaultThresholdEpsilon
		}
		_, err := sessionQuery(ctx, q, stmt)
		switch {
		case err == nil:
			return eps, "", nil
		case SQLState(err) == "":
			return 0, "", fmt.Errorf("asking for an epsilon share of %g: %w", eps, err)
		}
		note = fmt.Sprintf("the firewall refused an epsilon share of %g (%v), so every query was charged the session's share", eps, err)
	}
	rows, err := sessionQuery(ctx, q, "SHOW epsilon")
	if err != nil {
		return 0, "", fmt.Errorf("reading the session's epsilon share: %w", err)
	}
	share, err = rows.Float(0, 0)
	if err != nil {
		return 0, "", fmt.Errorf("reading the session's epsilon share: %w", err)
	}
	if note != "" {
		note += fmt.Sprintf(" of %g", share)
	}
	return share, note, nil
}

// Probe asks whether more than b rows satisfy where ("" for every row) and
// classifies the answer.
func (o *ThresholdOracle) Probe(ctx context.Context, where string, b int64) (Outcome, error) {
	sql := "SELECT COUNT(*) > " + strconv.FormatInt(b, 10) + " FROM " + o.table
	if where != "" {
		sql += " WHERE " + where
	}
	v, err := Count(ctx, o.q, sql)
	if err != nil {
		return 0, err
	}
	return classify(v), nil
}

// classify reads one threshold answer: anything but an exact 0 or 1 carries
// noise. Under a tiny epsilon a noisy answer is 0 or 1 with probability of
// the order of epsilon.
func classify(v float64) Outcome {
	switch v {
	case 0:
		return Below
	case 1:
		return Above
	}
	return Noisy
}

// bounds narrows [lo, hi], the range a count is known to lie in, by an
// outcome at threshold b under group size k.
func bounds(lo, hi, b, k int64, out Outcome) (int64, int64) {
	switch out {
	case Below:
		return lo, min(hi, b-k)
	case Above:
		return max(lo, b+k+1), hi
	}
	return max(lo, b-k+1), min(hi, b+k)
}

// nextThreshold picks the b in [0, n-1] whose worst outcome leaves the
// smallest range of [lo, hi], so that every probe narrows it (a ternary
// search when k > 0, a binary one when k = 0).
func nextThreshold(lo, hi, k, n int64) int64 {
	mid := lo + (hi-lo-1)/2
	best, bestWorst := int64(-1), int64(math.MaxInt64)
	for b := mid - k - 1; b <= mid+k+1; b++ {
		if b < 0 || b >= n {
			continue
		}
		worst := int64(0)
		for _, out := range []Outcome{Below, Noisy, Above} {
			l, h := bounds(lo, hi, b, k, out)
			worst = max(worst, h-l+1)
		}
		if worst < bestWorst {
			best, bestWorst = b, worst
		}
	}
	return best
}

// errNoProgress marks a search that no threshold in [0, n) can narrow: the
// model does not fit the firewall.
var errNoProgress = errors.New("no threshold narrows the count")

// Count is Algorithm 1 with a ternary search: the number of rows satisfying
// where, known to lie in [lo, hi]. A firewall whose answers contradict the
// model ends the search with the nearest bound, and Inconsistent counts it.
func (o *ThresholdOracle) Count(ctx context.Context, where string, lo, hi int64) (int64, error) {
	lo, hi = max(lo, 0), min(hi, o.N)
	for lo < hi {
		b := nextThreshold(lo, hi, o.K, o.N)
		if b < 0 {
			return 0, errNoProgress
		}
		out, err := o.Probe(ctx, where, b)
		if err != nil {
			return 0, err
		}
		l, h := bounds(lo, hi, b, o.K, out)
		if l > h {
			o.Inconsistent++
			if h < lo {
				return lo, nil
			}
			return hi, nil
		}
		if l == lo && h == hi {
			return 0, errNoProgress
		}
		lo, hi = l, h
	}
	return lo, nil
}

// tableSize finds n from threshold queries over the whole table. There the
// sensitivity is 1 exactly when n-k <= b < n, and b >= n is answered with an
// exact 0, so Below means n <= b and Noisy n in [b+1, b+k].
func (o *ThresholdOracle) tableSize(ctx context.Context) (int64, error) {
	lo, hi := int64(1), int64(1)
	// Double until a threshold is not exceeded.
	for {
		out, err := o.Probe(ctx, "", hi)
		if err != nil {
			return 0, fmt.Errorf("finding the table size: %w", err)
		}
		if out == Below {
			break
		}
		if out == Noisy {
			return o.sizeFromNoisy(ctx, hi)
		}
		lo = hi + o.K + 1
		if hi > math.MaxInt64/4 {
			return 0, errors.New("finding the table size: the table never stops growing")
		}
		hi *= 2
	}
	// n is in [lo, hi]: binary search, Below: n <= b, Above: n >= b+k+1.
	for lo < hi {
		b := lo + (hi-lo)/2
		out, err := o.Probe(ctx, "", b)
		if err != nil {
			return 0, fmt.Errorf("finding the table size: %w", err)
		}
		switch out {
		case Below:
			hi = b
		case Above:
			lo = b + o.K + 1
		default:
			return o.sizeFromNoisy(ctx, b)
		}
	}
	return lo, nil
}

// sizeFromNoisy settles n once a noisy answer at b put it in [b+1, b+k]:
// the first b' above b answered with an exact 0 is n.
func (o *ThresholdOracle) sizeFromNoisy(ctx context.Context, b int64) (int64, error) {
	for x := b + 1; x <= b+o.K; x++ {
		out, err := o.Probe(ctx, "", x)
		if err != nil {
			return 0, fmt.Errorf("finding the table size: %w", err)
		}
		if out == Below {
			return x, nil
		}
	}
	return b + o.K, nil
}

// Domain is a column's public domain: an integer range Lo..Hi, or, when
// Categories is set, a list of text values.
type Domain struct {
	Column     string
	Lo, Hi     int64
	Categories []string
}

// Size is the number of values in the domain.
func (d Domain) Size() int64 {
	if d.Categories != nil {
		return int64(len(d.Categories))
	}
	return d.Hi - d.Lo + 1
}

// Literal renders the i-th value (0-based) as an SQL literal.
func (d Domain) Literal(i int64) string {
	if d.Categories != nil {
		return Literal(d.Categories[i])
	}
	return strconv.FormatInt(d.Lo+i, 10)
}

// Range renders the predicate "the column's value is one of the values
// i..j-1" (0-based, j exclusive) as the range u <= col < v the paper's
// threshold range-count queries use; text values compare in the order of
// Categories, which must be sorted the way SQLite sorts them.
func (d Domain) Range(i, j int64) string {
	var parts []string
	if i > 0 {
		parts = append(parts, pglex.QuoteIdent(d.Column)+" >= "+d.Literal(i))
	}
	if j < d.Size() {
		parts = append(parts, pglex.QuoteIdent(d.Column)+" < "+d.Literal(j))
	}
	if len(parts) == 0 {
		return pglex.QuoteIdent(d.Column) + " IS NOT NULL"
	}
	return strings.Join(parts, " AND ")
}

// ParseDomain reads a domain flag: "col=lo..hi" for integers or
// "col=a,b,c" for categories (sorted here, as SQLite compares text).
func ParseDomain(s string) (Domain, error) {
	col, spec, ok := strings.Cut(s, "=")
	col, spec = strings.TrimSpace(col), strings.TrimSpace(spec)
	if !ok || spec == "" {
		return Domain{}, fmt.Errorf("domain %q: want column=lo..hi or column=a,b,c", s)
	}
	col, err := ParseColumnName(col)
	if err != nil {
		return Domain{}, fmt.Errorf("domain %q: %w", s, err)
	}
	if lo, hi, isRange := strings.Cut(spec, ".."); isRange {
		l, err1 := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
		h, err2 := strconv.ParseInt(strings.TrimSpace(hi), 10, 64)
		if err1 != nil || err2 != nil || h < l {
			return Domain{}, fmt.Errorf("domain %q: %q is not an integer range lo..hi", s, spec)
		}
		return Domain{Column: col, Lo: l, Hi: h}, nil
	}
	var cats []string
	for _, c := range strings.Split(spec, ",") {
		cats = append(cats, strings.TrimSpace(c))
	}
	return Domain{Column: col, Categories: sortedText(cats)}, nil
}

// sortedText sorts text values by bytes, the order of SQLite's BINARY
// collation.
func sortedText(v []string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}

package attacks

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"countwall/pglex"
)

// PriorRelease is Kifer and Machanavajjhala's leak of differential privacy
// after exact releases (REFERENCES.md: [KM11], section 4.1). A column R with
// values r_1..r_k; an earlier release published the k-1 exact pair counts
// COUNT(*) WHERE R = r_i OR R = r_{i+1}. Alone, they leave one unknown; each
// noisy count under differential privacy, combined with them, estimates
// every count, and the k estimates average:
//
//  1. Take the k-1 exact pair counts P_i = x_i + x_{i+1}, from a firewall
//     answering exactly (--release-dsn, --release-config) or a CSV of
//     published counts (--release).
//  2. Ask k noisy counts y_i of x_i: one histogram SELECT R, COUNT(*) ...
//     GROUP BY R over the declared domain (one query, one charge), or k
//     single counts (--singles).
//  3. With d_1 = 0 and d_{i+1} = P_i - d_i, x_i = (-1)^(i-1) x_1 + d_i for
//     every i, so each y_i gives an estimate (-1)^(i-1) (y_i - d_i) of x_1
//     with the noise's variance 2/epsilon^2.
//  4. Average the k estimates: variance 2/(k epsilon^2) (the paper's
//     derivation). --estimator median takes their median instead, the
//     maximum-likelihood estimate under Laplace noise (variance about
//     1/(k epsilon^2)), which also withstands the answers the firewall
//     clamps at 0.
//  5. Round x_1 and read every x_i = (-1)^(i-1) x_1 + d_i: all k counts are
//     exact together, or all off by the same amount.
var PriorRelease = &Attack{
	Name:    "prior-release",
	Against: "laplace",
	Source:  "Kifer-Machanavajjhala 4.1",
	Summary: "a whole histogram from one noisy GROUP BY and an earlier exact release of the k-1 pair counts, by averaging k estimates",
	Script:  priorReleaseScript,
	Run:     runPriorRelease,
	Score:   scorePriorRelease,
	Demo: func() Options {
		// Age, k = 101: one histogram at the demo's epsilon share.
		return Options{
			Target:  Target{Table: "people"},
			Domains: []Domain{{Column: "age", Lo: 0, Hi: 100}},
			Params:  &PriorReleaseParams{Estimator: "mean", Epsilon: 0.5},
		}
	},
	Flags: func(f *pflag.FlagSet, o *Options) {
		p := o.Params.(*PriorReleaseParams)
		DomainsFlag(f, &o.Domains, "the column R and its public domain r_1..r_k, col=lo..hi or col=a,b,c (its order is the release's)")
		f.StringVar(&p.Release, "release", p.Release, "a CSV of the published pair counts: r_i,r_i+1,count per line")
		f.StringVar(&p.ReleaseDSN, "release-dsn", p.ReleaseDSN, "PostgreSQL URL of a firewall under exact that gives the pair counts")
		f.StringVar(&p.ReleaseConfig, "release-config", p.ReleaseConfig, "a config under exact, run in process, that gives the pair counts")
		f.BoolVar(&p.Singles, "singles", p.Singles, "ask k single counts instead of one histogram")
		f.Float64Var(&p.Epsilon, "epsilon-share", p.Epsilon, "the per-query epsilon to ask for with SET epsilon (0: the session's)")
		f.StringVar(&p.Estimator, "estimator", p.Estimator, "mean (the paper's) or median of the k estimates")
	},
}

func init() { register(PriorRelease) }

// PriorReleaseParams are prior-release's own options.
type PriorReleaseParams struct {
	// The earlier exact release: a CSV, or a firewall reached through
	// Options.Connect.
	Release, ReleaseDSN, ReleaseConfig string
	Singles                            bool
	Epsilon                            float64
	Estimator                          string
	// Pairs, when set, are the pair counts themselves (tests, the demo).
	Pairs []int64
}

func priorReleasePlan(o Options) (*PriorReleaseParams, Domain, []string, error) {
	p, ok := o.Params.(*PriorReleaseParams)
	if !ok || p == nil {
		return nil, Domain{}, nil, errors.New("prior-release: no parameters")
	}
	if len(o.Domains) != 1 {
		return nil, Domain{}, nil, errors.New("prior-release needs one column and its domain: --domain col=lo..hi or col=a,b,c")
	}
	d := o.Domains[0]
	if !IsIdentifier(o.Target.Table) || d.Column == "" {
		return nil, Domain{}, nil, errors.New("prior-release: the table must be a plain SQL identifier, and the domain must name a column")
	}
	if d.Size() < 2 || d.Size() > 100_000 {
		return nil, Domain{}, nil, fmt.Errorf("prior-release: the domain of %s has %d values; want 2 to 100,000", d.Column, d.Size())
	}
	if p.Estimator != "mean" && p.Estimator != "median" {
		return nil, Domain{}, nil, fmt.Errorf("--estimator %q: want mean or median", p.Estimator)
	}
	return p, d, domainLiterals(d), nil
}

// domainLiterals are a domain's values as SQL literals, in order.
func domainLiterals(d Domain) []string {
	if d.Categories != nil {
		out := make([]string, len(d.Categories))
		for i, c := range d.Categories {
			out[i] = "'" + strings.ReplaceAll(c, "'", "''") + "'"
		}
		return out
	}
	return IntRange(d.Lo, d.Hi)
}

func (o Options) where(cond string) string {
	if o.Target.Where == "" {
		return cond
	}
	return "(" + o.Target.Where + ") AND " + cond
}

// pairSQL is the earlier release's query for r_i and r_{i+1}.
func pairSQL(o Options, col, a, b string) string {
	return "SELECT COUNT(*) FROM " + o.Target.Table + " WHERE " + o.where(col+" = "+a+" OR "+col+" = "+b)
}

// noisySQL is step 2: the histogram, or the k single counts.
func noisySQL(o Options, p *PriorReleaseParams, col string, values []string) []string {
	if !p.Singles {
		s := "SELECT " + col + ", COUNT(*) FROM " + o.Target.Table
		if o.Target.Where != "" {
			s += " WHERE " + o.Target.Where
		}
		return []string{s + " GROUP BY " + col + " ORDER BY " + col}
	}
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = "SELECT COUNT(*) FROM " + o.Target.Table + " WHERE " + o.where(col+" = "+v)
	}
	return out
}

// priorReleaseScript is the noisy queries (the release is read, not asked).
func priorReleaseScript(o Options) []string {
	p, d, values, err := priorReleasePlan(o)
	if err != nil {
		return []string{"-- prior-release: " + err.Error()}
	}
	return noisySQL(o, p, pglex.QuoteIdent(d.Column), values)
}

// pairCounts is step 1.
func pairCounts(ctx context.Context, o Options, p *PriorReleaseParams, col string, values []string) ([]int64, error) {
	switch {
	case len(p.Pairs) > 0:
		if len(p.Pairs) != len(values)-1 {
			return nil, fmt.Errorf("%d pair counts for %d values: want %d", len(p.Pairs), len(values), len(values)-1)
		}
		return p.Pairs, nil
	case p.Release != "":
		return readRelease(p.Release, values)
	case p.ReleaseDSN != "" || p.ReleaseConfig != "":
		if o.Connect == nil {
			return nil, errors.New("no way to reach the release firewall from here")
		}
		rq, closeRQ, err := o.Connect(ctx, p.ReleaseDSN, p.ReleaseConfig)
		if err != nil {
			return nil, fmt.Errorf("reaching the release firewall: %w", err)
		}
		defer closeRQ()
		out := make([]int64, len(values)-1)
		for i := range out {
			v, err := Count(ctx, rq, pairSQL(o, col, values[i], values[i+1]))
			if err != nil {
				return nil, fmt.Errorf("asking the release firewall for pair %d: %w", i+1, err)
			}
			if v != math.Round(v) {
				return nil, fmt.Errorf("the release firewall answered pair %d with %g: it is not exact", i+1, v)
			}
			out[i] = int64(v)
		}
		return out, nil
	}
	return nil, errors.New("prior-release needs the earlier exact release: --release FILE, --release-dsn or --release-config")
}

// readRelease reads a CSV of published pair counts, r_i,r_i+1,count per
// line (a header line is skipped), in any order.
func readRelease(path string, values []string) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the release: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = 3
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("reading the release %s: %w", path, err)
	}
	index := map[string]int{}
	for i, v := range values {
		index[v] = i
	}
	out := make([]int64, len(values)-1)
	seen := make([]bool, len(out))
	for line, rec := range recs {
		n, err := strconv.ParseInt(strings.TrimSpace(rec[2]), 10, 64)
		if err != nil {
			if line == 0 {
				continue // a header
			}
			return nil, fmt.Errorf("release %s line %d: the count is not an integer", path, line+1)
		}
		i, ok := index[Literal(strings.TrimSpace(rec[0]))]
		j, ok2 := index[Literal(strings.TrimSpace(rec[1]))]
		if !ok || !ok2 || j != i+1 {
			return nil, fmt.Errorf("release %s line %d: not a pair of consecutive domain values", path, line+1)
		}
		out[i], seen[i] = n, true
	}
	if k := slices.Index(seen, false); k >= 0 {
		return nil, fmt.Errorf("release %s has no count for the pair %s, %s", path, values[k], values[k+1])
	}
	return out, nil
}

// WriteRelease writes pair counts as the CSV --release reads.
func WriteRelease(path string, values []string, pairs []int64) error {
	var b strings.Builder
	b.WriteString("r_i,r_i+1,count\n")
	for i, n := range pairs {
		fmt.Fprintf(&b, "%s,%s,%d\n", strings.Trim(values[i], "'"), strings.Trim(values[i+1], "'"), n)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func runPriorRelease(ctx context.Context, q Querier, o Options) (*Result, error) {
	p, d, values, err := priorReleasePlan(o)
	if err != nil {
		return nil, err
	}
	pairs, err := pairCounts(ctx, o, p, pglex.QuoteIdent(d.Column), values)
	if err != nil {
		return nil, err
	}
	if p.Epsilon > 0 {
		if _, err := sessionQuery(ctx, q, "SET epsilon = "+strconv.FormatFloat(p.Epsilon, 'g', -1, 64)); err != nil {
			return nil, fmt.Errorf("asking for an epsilon share of %g: %w", p.Epsilon, err)
		}
	}
	// Step 2.
	noisy := make([]float64, len(values))
	answered := make([]bool, len(values))
	var note string
	for j, s := range noisySQL(o, p, pglex.QuoteIdent(d.Column), values) {
		rows, err := q.Query(ctx, s)
		if err != nil {
			if j == 0 || !Stopped(err) {
				return nil, fmt.Errorf("asking the noisy counts: %w", err)
			}
			note = fmt.Sprintf("stopped after %d answers: %v; estimated from those", j, err)
			break
		}
		if p.Singles {
			noisy[j], err = rows.Float(0, len(rows.Columns)-1)
			answered[j] = err == nil
			continue
		}
		index := map[string]int{}
		for i, v := range values {
			index[v] = i
		}
		for r, row := range rows.Values {
			i, ok := index[Literal(row[0])]
			if !ok {
				continue
			}
			if noisy[i], err = rows.Float(r, len(row)-1); err == nil {
				answered[i] = true
			}
		}
	}
	// Step 3: d_i, and one estimate of x_1 per answered count.
	dd := make([]float64, len(values))
	for i := 1; i < len(values); i++ {
		dd[i] = float64(pairs[i-1]) - dd[i-1]
	}
	var est []float64
	for i := range values {
		if answered[i] {
			est = append(est, altSign(i)*(noisy[i]-dd[i]))
		}
	}
	if len(est) == 0 {
		return &Result{Undecided: true, Note: note}, nil
	}
	// Step 4.
	mean, median := meanOf(est), medianOf(est)
	x1 := mean
	if p.Estimator == "median" {
		x1 = median
	}
	// Step 5.
	r1 := math.Round(x1)
	res := &Result{Estimate: x1, Recovered: int64(r1), Note: note, Histogram: make([]Bin, len(values)),
		Details: map[string]any{"k": len(values), "estimates": len(est), "mean": mean, "median": median, "estimator": p.Estimator}}
	for i, v := range values {
		x := altSign(i)*r1 + dd[i]
		res.Histogram[i] = Bin{Value: v, Answer: int64(math.Round(noisy[i])), Estimate: int64(x)}
	}
	return res, nil
}

func altSign(i int) float64 {
	if i%2 == 0 {
		return 1
	}
	return -1
}

func meanOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// PriorReleaseVariance is the paper's prediction for the averaged estimate
// of every count: 2/(k epsilon^2), epsilon being what each noisy count cost.
func PriorReleaseVariance(k int, epsilon float64) float64 {
	return 2 / (float64(k) * epsilon * epsilon)
}

// scorePriorRelease scores the histogram and sets beside it the paper's
// prediction: the standard deviation sqrt(2/(k epsilon^2)) of the averaged
// estimate, epsilon being what each noisy count cost (the ledger's charge
// for the histogram, or for one single count).
func scorePriorRelease(ctx context.Context, truthPath string, o Options, r *Result) error {
	if len(o.Domains) != 1 {
		return errors.New("prior-release: no column to score")
	}
	o.Column = o.Domains[0].Column
	if err := scoreHistogram(ctx, truthPath, o, r); err != nil {
		return err
	}
	k, _ := r.Details["k"].(int)
	eps := r.Spent["dp"]
	if r.Charged != nil {
		eps = r.Charged["dp"] // this run's own, whatever the analyst spent before
	}
	if p, ok := o.Params.(*PriorReleaseParams); ok && p.Singles && r.Queries > 0 {
		eps /= float64(r.Queries)
	}
	if k > 0 && eps > 0 {
		sd := math.Sqrt(PriorReleaseVariance(k, eps))
		r.Details["epsilon_per_count"] = eps
		r.Details["predicted_sd"] = sd
		// The mean of k Laplace draws is close to normal: the chance that
		// it lands within 1/2 of the truth, where every count comes out.
		r.Details["predicted_exact"] = math.Erf(0.5 / (sd * math.Sqrt2))
	}
	return nil
}

package attacks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"countwall/pglex"
)

// NoiseRemover recovers the exact histogram of a column behind sticky
// bounded noise, suppressed small counts included (Asghar and Kaafar,
// Algorithm 4 and section 4.2.2).
//
// The sum of the answers for the two sides {A1, A2} of a two-partition of a
// set of values A is the true count of A plus two noise terms; different
// two-partitions select different contributor sets, so their noise differs,
// and the mean over k two-partitions, rounded, is the count of A (Algorithm
// 4). The attack:
//
//  1. asks each value alone, and takes as the base set A' the BaseSize values
//     with the smallest non-zero answers (a non-zero answer proves the value
//     has contributors; small ones keep each query cheap for the store);
//  2. finds n' = count(A') from BaseK two-partitions of A';
//  3. for a value a outside A', finds n(a) = count(A' ∪ {a}) from K
//     two-partitions and publishes n(a) - n'. When a's own answer is 0 (no
//     contributor, or a count the firewall suppressed) a joins one side of
//     each two-partition of A', so the sides still differ in contributors if
//     it has any: the difference then tells a true zero from a suppressed
//     small count;
//  4. for a value a in A', finds count(A' \ {a}) and publishes n' minus it;
//  5. floors negative results at 0.
//
// Each total is right with probability P(|mean of 2K noise terms| < 1/2)
// (the paper's Eq. 5): for uniform noise on -2..2, 0.987 at K = 100 and
// 0.9996 at K = 200. That assumes independent noise per contributor set.
// Under the cell key method a set's key is the sum of its values' keys, so
// all the two-partition sums of a base set depend on its BaseSize per-value
// keys alone: the base total, which every value shares, is then wrong for a
// small fraction of firewalls (about 0.06% at D = 2 and 0.8% at D = 5 with
// 12 values and 1,000 two-partitions, against about 1e-6 with independent
// noise), and a run that draws one loses many values at once.
var NoiseRemover = &Attack{
	Name:    "noise-remover",
	Against: "cellkey",
	Source:  "Asghar-Kaafar Alg. 4, 4.2.2, Tables 2-3",
	Summary: "the exact histogram of a column behind sticky noise, suppressed counts included, by averaging two-partitions",
	Run:     runNoiseRemover,
	Score:   scoreHistogram,
	Demo: func() Options {
		// The age histogram, 0..100, at K = 50: about 10,600 queries, each
		// total right with probability about 0.92 at D = 2.
		return Options{Target: Target{Table: "people"}, Column: "age", Values: IntRange(0, 100), K: 50, BaseK: 200, BaseSize: 10, Seed: 1}
	},
	Flags: func(f *pflag.FlagSet, o *Options) {
		ColumnFlag(f, &o.Column, "column", "the column whose histogram to recover (give its domain with --min/--max or --values)")
		r := &intDomain{dst: &o.Values, lo: 0, hi: 100}
		f.Var(intBound{r, &r.lo}, "min", "the column's public integer domain, lowest value (default 0)")
		f.Var(intBound{r, &r.hi}, "max", "the column's public integer domain, highest value (default 100)")
		f.Var(literalList{&o.Values}, "values", "the column's public domain as a list of values, instead of --min/--max")
		f.IntVar(&o.K, "k", o.K, "two-partitions averaged per value (the paper's Table 2 uses 200)")
		f.IntVar(&o.BaseK, "base-k", o.BaseK, "two-partitions for the base set's total (the paper uses 1000)")
		f.IntVar(&o.BaseSize, "base-size", o.BaseSize, "values in the base set")
		f.Uint64Var(&o.Seed, "partition-seed", o.Seed, "chooses which two-partitions are sampled")
	},
}

func init() { register(NoiseRemover) }

// Noise remover defaults: the paper's Adult experiment uses a base set of 10
// values and 1,000 two-partitions for it; 12 values allow up to 1,023
// two-partitions of A' less one value, enough for any K up to 1,000.
const (
	defaultNoiseK        = 200
	defaultNoiseBaseK    = 1000
	defaultNoiseBaseSize = 12
	minNoiseBaseSize     = 3
	maxNoiseBaseSize     = 30 // masks are uint64 and IN lists stay short
)

// inQuery renders COUNT(*) over the rows of the target whose column is one of
// values.
func inQuery(o Options, values []string) string {
	in := pglex.QuoteIdent(o.Column) + " IN (" + strings.Join(values, ", ") + ")"
	if len(values) == 1 {
		in = pglex.QuoteIdent(o.Column) + " = " + values[0]
	}
	where := in
	if o.Target.Where != "" {
		where = "(" + o.Target.Where + ") AND " + in
	}
	return Target{Table: o.Target.Table, Where: where}.querySQL()
}

// errStopped marks the end of an attack the firewall cut short (a spent
// budget): what was recovered so far is still reported.
var errStopped = errors.New("stopped by the firewall")

type noiseRemover struct {
	q     Querier
	o     Options
	rng   *rand.Rand
	stop  error // the refusal that ended the attack, if any
	asked int
	done  int // steps done, of steps, for o.Progress
	steps int
}

// step reports one more step done.
func (nr *noiseRemover) step() {
	nr.done++
	if nr.o.Progress != nil {
		nr.o.Progress(nr.done, nr.steps)
	}
}

// countAll asks the count of each set, with up to o.Pipeline statements in
// flight, and hands each to got, in order, up to the first error, which it
// returns (errStopped for a stop, kept in nr.stop).
func (nr *noiseRemover) countAll(ctx context.Context, sets [][]string, got func(i int, n int64)) error {
	var first error
	inBatches(ctx, nr.q, nr.o.Pipeline, len(sets), func(i int) string { return inQuery(nr.o, sets[i]) },
		func(i int, rows *Rows, err error) bool {
			nr.asked++
			v, err := countOf(rows, err)
			switch {
			case err != nil && Stopped(err):
				nr.stop, first = err, errStopped
			case err != nil:
				first = err
			default:
				got(i, int64(math.Round(v)))
			}
			return first == nil
		})
	return first
}

// total is Algorithm 4: the count of set (plus extra, when given, always on
// the side holding set's last value) from k two-partitions of set, sampled
// without repetition. The two-partitions' statements do not depend on one
// another's answers: they are sent o.Pipeline at a time.
func (nr *noiseRemover) total(ctx context.Context, set []string, extra string, k int) (int64, error) {
	masks := sampleMasks(nr.rng, len(set), k)
	sides := make([][]string, 0, 2*len(masks))
	for _, mask := range masks {
		a1, a2 := twoPartition(set, mask)
		if extra != "" {
			a2 = append(a2, extra)
		}
		sides = append(sides, a1, a2)
	}
	var sum int64
	if err := nr.countAll(ctx, sides, func(_ int, n int64) { sum += n }); err != nil {
		return 0, err
	}
	return int64(math.Round(float64(sum) / float64(len(masks)))), nil
}

// TotalByTwoPartitions is Algorithm 4 on its own: the count of the target's
// rows whose column is one of values, from k two-partitions of values (all of
// them when there are fewer), sampled with o.Seed. Every value must have a
// non-zero answer, so that every side has contributors of its own.
func TotalByTwoPartitions(ctx context.Context, q Querier, o Options, values []string, k int) (int64, error) {
	if len(values) < 2 || len(values) > maxNoiseBaseSize {
		return 0, fmt.Errorf("two-partitions need 2 to %d values, not %d", maxNoiseBaseSize, len(values))
	}
	nr := &noiseRemover{q: q, o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x6e6f697365))}
	n, err := nr.total(ctx, values, "", k)
	if errors.Is(err, errStopped) {
		return 0, nr.stop
	}
	return n, err
}

// twoPartition splits set by mask: the values whose bit is set go to A1,
// the rest to A2, which always holds the last value (see sampleMasks).
func twoPartition(set []string, mask uint64) (a1, a2 []string) {
	for j, v := range set {
		if j < len(set)-1 && mask&(1<<j) != 0 {
			a1 = append(a1, v)
		} else {
			a2 = append(a2, v)
		}
	}
	return a1, a2
}

// TwoPartitionSQL is the pair of statements the noise remover sends for one
// two-partition of set (mask as in twoPartition): COUNT(*) of the target's
// rows whose column is in A1, then in A2.
func TwoPartitionSQL(o Options, set []string, mask uint64) (string, string) {
	a1, a2 := twoPartition(set, mask)
	return inQuery(o, a1), inQuery(o, a2)
}

// twoPartitions is the number of two-partitions of a set of n elements.
func twoPartitions(n int) int {
	if n < 2 {
		return 0
	}
	if n-1 >= 62 {
		return math.MaxInt
	}
	return 1<<(n-1) - 1
}

// sampleMasks draws k distinct two-partitions of an n-element set, each a
// mask over the first n-1 elements naming side A1 (the last element is
// always in A2, so every two-partition has exactly one mask, and neither
// side is empty). With k at least the number of two-partitions, all of them.
func sampleMasks(rng *rand.Rand, n, k int) []uint64 {
	total := twoPartitions(n)
	if k >= total {
		out := make([]uint64, total)
		for i := range out {
			out[i] = uint64(i + 1)
		}
		return out
	}
	// Floyd's algorithm: k distinct values from 1..total.
	seen := make(map[uint64]bool, k)
	out := make([]uint64, 0, k)
	for j := total - k + 1; j <= total; j++ {
		t := uint64(rng.IntN(j) + 1)
		if seen[t] {
			t = uint64(j)
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

func runNoiseRemover(ctx context.Context, q Querier, o Options) (*Result, error) {
	if o.Column == "" || len(o.Values) == 0 {
		return nil, errors.New("noise-remover needs a column (--column) and its public domain (--min/--max or --values)")
	}
	k, baseK, baseSize, err := noiseRemoverSizes(o)
	if err != nil {
		return nil, err
	}
	nr := &noiseRemover{q: q, o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x6e6f697365)), steps: len(o.Values)*2 + 1}
	res := &Result{Histogram: make([]Bin, len(o.Values))}
	for i, v := range o.Values {
		res.Histogram[i] = Bin{Value: v, Estimate: -1}
	}

	// 1. Each value alone; the base set is drawn from the non-zero ones.
	nonZero, err := nr.askEach(ctx, res)
	if err != nil {
		return nr.partial(res, err)
	}
	if len(nonZero) < minNoiseBaseSize {
		return nil, fmt.Errorf("only %d values have non-zero answers; the attack needs at least %d for its base set (widen the target)", len(nonZero), minNoiseBaseSize)
	}
	baseValues, inBase := chooseBaseSet(res, nonZero, baseSize)
	// The smallest set partitioned is A' less one value.
	if limit := twoPartitions(len(baseValues) - 1); k > limit {
		res.Note = fmt.Sprintf("K lowered from %d to %d, all the two-partitions of a base set of %d values less one", k, limit, len(baseValues))
		k = limit
	}
	baseK = min(baseK, twoPartitions(len(baseValues)))

	// 2. The base set's total.
	nBase, err := nr.total(ctx, baseValues, "", baseK)
	if err != nil {
		return nr.partial(res, err)
	}
	nr.step()

	// 3 and 4. Every value by difference with the base total.
	zeroAnswers, suppressedFound := 0, 0
	for i, v := range o.Values {
		est, err := nr.estimate(ctx, v, res.Histogram[i].Answer, inBase[i], baseValues, nBase, k)
		if err != nil {
			return nr.partial(res, err)
		}
		res.Histogram[i].Estimate = est
		if res.Histogram[i].Answer == 0 {
			zeroAnswers++
			if est > 0 {
				suppressedFound++
			}
		}
		nr.step()
	}
	res.Recovered = int64(len(o.Values))
	res.Estimate = float64(len(o.Values))
	res.Details = map[string]any{
		"base_set": baseValues, "base_total": nBase, "k": k, "base_k": baseK,
		"zero_answers": zeroAnswers, "suppressed_recovered_nonzero": suppressedFound,
	}
	return res, nil
}

// noiseRemoverSizes is K, the base set's K and the base set's size, each
// defaulted when not given.
func noiseRemoverSizes(o Options) (k, baseK, baseSize int, err error) {
	k, baseK, baseSize = o.K, o.BaseK, o.BaseSize
	if k <= 0 {
		k = defaultNoiseK
	}
	if baseK <= 0 {
		baseK = defaultNoiseBaseK
	}
	if baseSize <= 0 {
		baseSize = defaultNoiseBaseSize
	}
	if baseSize < minNoiseBaseSize || baseSize > maxNoiseBaseSize {
		return 0, 0, 0, fmt.Errorf("the base set must have %d to %d values, not %d", minNoiseBaseSize, maxNoiseBaseSize, baseSize)
	}
	return k, baseK, baseSize, nil
}

// askEach asks for each value alone, records the answers in res, and
// returns the indexes of the values with a non-zero answer.
func (nr *noiseRemover) askEach(ctx context.Context, res *Result) ([]int, error) {
	sets := make([][]string, len(nr.o.Values))
	for i, v := range nr.o.Values {
		sets[i] = []string{v}
	}
	var nonZero []int
	err := nr.countAll(ctx, sets, func(i int, a int64) {
		res.Histogram[i].Answer = a
		if a > 0 {
			nonZero = append(nonZero, i)
		}
		nr.step()
	})
	return nonZero, err
}

// chooseBaseSet takes as the base set the baseSize values with the smallest
// non-zero answers, in domain order, and says which indexes are in it.
func chooseBaseSet(res *Result, nonZero []int, baseSize int) ([]string, map[int]bool) {
	sort.SliceStable(nonZero, func(a, b int) bool { return res.Histogram[nonZero[a]].Answer < res.Histogram[nonZero[b]].Answer })
	base := nonZero[:min(baseSize, len(nonZero))]
	sort.Ints(base)
	inBase := map[int]bool{}
	baseValues := make([]string, len(base))
	for j, i := range base {
		inBase[i] = true
		baseValues[j] = res.Histogram[i].Value
	}
	return baseValues, inBase
}

// estimate is steps 3 to 5 for one value v, whose own answer was answer:
// its count by difference with the base set's total nBase, floored at 0.
func (nr *noiseRemover) estimate(ctx context.Context, v string, answer int64, inBase bool, baseValues []string, nBase int64, k int) (int64, error) {
	var est int64
	switch {
	case inBase:
		rest := make([]string, 0, len(baseValues)-1)
		for _, b := range baseValues {
			if b != v {
				rest = append(rest, b)
			}
		}
		n, err := nr.total(ctx, rest, "", k)
		if err != nil {
			return 0, err
		}
		est = nBase - n
	case answer > 0:
		n, err := nr.total(ctx, append(append([]string(nil), baseValues...), v), "", k)
		if err != nil {
			return 0, err
		}
		est = n - nBase
	default:
		n, err := nr.total(ctx, baseValues, v, k)
		if err != nil {
			return 0, err
		}
		est = n - nBase
	}
	// 5. A count is never negative.
	return max(est, 0), nil
}

// partial ends a run the firewall cut short, keeping what was recovered; any
// other error ends it with that error.
func (nr *noiseRemover) partial(res *Result, err error) (*Result, error) {
	if !errors.Is(err, errStopped) {
		return nil, err
	}
	n := 0
	for _, b := range res.Histogram {
		if b.Estimate >= 0 {
			n++
		}
	}
	res.Recovered = int64(n)
	res.Estimate = float64(n)
	res.Note = fmt.Sprintf("stopped after %d queries: %v", nr.asked, nr.stop)
	return res, nil
}

// scoreHistogram compares a recovered histogram with the true counts read
// from the protected database (opened read-only). A value not recovered (the
// attack was stopped first) counts as wrong.
func scoreHistogram(ctx context.Context, truthPath string, o Options, r *Result) error {
	truth, err := TrueHistogram(ctx, truthPath, o.Target, o.Column)
	if err != nil {
		return err
	}
	exact := 0
	for i := range r.Histogram {
		b := &r.Histogram[i]
		t := truth[literalText(b.Value)]
		b.Truth = &t
		if b.Estimate == t {
			exact++
		}
	}
	r.CellsTotal, r.CellsExact, r.Unit = len(r.Histogram), &exact, "values recovered exactly"
	if r.CellsTotal > 0 {
		s := float64(exact) / float64(r.CellsTotal)
		r.Success = &s
	}
	return nil
}

// TrueHistogram reads the true count of every value of column among the
// target's rows from the protected database, opened read-only: the
// attacker's ground truth, never the firewall's path. Keys are the values as
// text (NULL as "", which no domain value is).
func TrueHistogram(ctx context.Context, path string, t Target, column string) (map[string]int64, error) {
	return TrueRows(ctx, path, t, []string{column})
}

// literalText is the value an SQL literal stands for: a quoted text literal
// loses its quotes and doubled inner quotes, a number stays as it is.
func literalText(lit string) string {
	if len(lit) >= 2 && lit[0] == '\'' && lit[len(lit)-1] == '\'' {
		return strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
	}
	return lit
}

// Literal renders a domain value as an SQL literal: integers bare, anything
// else single-quoted.
func Literal(v string) string {
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// IntRange is the SQL literals lo..hi, a column's integer domain.
func IntRange(lo, hi int64) []string {
	var out []string
	for v := lo; v <= hi; v++ {
		out = append(out, strconv.FormatInt(v, 10))
	}
	return out
}

// IsIdentifier reports whether s is a plain SQL identifier (letters, digits
// and underscores, not starting with a digit), safe to put in SQL the attacks
// build themselves against the truth database.
func IsIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// mechanismName asks the firewall which mechanism it runs (SHOW mechanism,
// whose first row is the name), outside the attack's query count and log;
// "" when it will not say.
func mechanismName(ctx context.Context, q Querier) string {
	rows, err := unwrapped(q).Query(ctx, "SHOW mechanism")
	if err != nil || len(rows.Values) < 1 || len(rows.Values[0]) < 1 {
		return ""
	}
	return rows.Values[0][0]
}

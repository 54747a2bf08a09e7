package attacks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"

	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"countwall/pgerror"
	"countwall/pglex"
	"countwall/proxy/risk"
)

// LinearReconstruction is the Dinur-Nissim reconstruction attack
// (REFERENCES.md: [DN03]; the Diffix series' "Theory of reconstruction
// attacks" [CNSU20], and Dwork, Smith, Steinke and Ullman's survey [DSSU17],
// section 2). A group of n people is known to the attacker by its public
// attributes (the prior information z_1..z_n); each has a secret bit b_i.
// Every query counts the people of a random half of the group whose bit is
// 1, the half chosen by public attributes only. With answers whose error is
// well below sqrt(n), the bits come out, although no query names a person:
//
//  1. Read the prior information: the group's values of the key column,
//     which single people out within the group (a value shared by c people
//     is one unknown in 0..c).
//  2. Choose m random subsets S_1..S_m of the values, each value in each
//     subset with probability 1/2 (the exponential attack, for n <= 12:
//     all 2^n subsets).
//  3. Ask a_j = COUNT(*) WHERE group AND secret = 1 AND key IN S_j, the IN
//     list cut to the firewall's max_in_list and OR-ed.
//  4. Solve for b~ in [0,1]^n: the LP attack takes the b~ with the smallest
//     max_j |a_j - (A b~)_j|; least squares the b~ with the smallest sum of
//     squares, clamped; the exponential attack the b in {0,1}^n with the
//     smallest max error over all 2^n answers.
//  5. Round each b~_i to the nearest bit: all but O(alpha^2 n^2) bits are
//     right when every answer is within alpha n (the exponential attack:
//     all but 4 alpha n).
//
// Where the firewall's policy refuses the subset SQL (IN lists, OR, the
// secret in WHERE), the attack says which rule stopped it: a finding about
// the policy, not a failure.
var LinearReconstruction = &Attack{
	Name:    "linear-reconstruction",
	Against: "any noisy count",
	Source:  "Dinur-Nissim; Dwork et al. survey 2",
	Summary: "every secret bit of a group from m noisy counts of random halves of it, solved by LP or least squares",
	Script:  linearScript,
	Run:     runLinearReconstruction,
	Score:   scoreLinearReconstruction,
	Demo: func() Options {
		// suburb_0018 holds 144 people of the demo's 20,000 (seed 1);
		// income, rounded to 100, singles out all but a few of them.
		return Options{
			Target: Target{Table: "people", Where: "suburb = 'suburb_0018'"},
			Params: &LinearParams{Key: "income", Secret: "secret", MPerN: 4, Solver: "lsq", MaxIn: 50, Seed: 1},
		}
	},
	Flags: func(f *pflag.FlagSet, o *Options) {
		p := o.Params.(*LinearParams)
		f.StringVar(&o.Background, "public", o.Background, "the attacker's prior information: a database holding the group's public columns (the key), read for those only")
		ColumnFlag(f, &p.Key, "key", "the public column whose values single people out within the group")
		f.StringVar(&p.Secret, "secret", p.Secret, `the secret bit: a 0/1 column (1 is the secret), or a condition that holds where it is 1 ("y = 'yes'")`)
		f.IntVar(&p.M, "m", p.M, "queries to ask (0: --m-per-n times the group's size)")
		f.Float64Var(&p.MPerN, "m-per-n", p.MPerN, "queries per person in the group, when --m is 0")
		f.StringVar(&p.Solver, "solver", p.Solver, "lp (smallest max error), lsq (least squares) or exp (all 2^n subsets, n <= 12)")
		f.IntVar(&p.MaxIn, "max-in", p.MaxIn, "values per IN list (the firewall's max_in_list)")
		f.Uint64Var(&p.Seed, "subset-seed", p.Seed, "chooses the random subsets")
		sumSecretFlags(f, o, &p.SumSecret)
	},
}

func init() { register(LinearReconstruction) }

// LinearParams are linear-reconstruction's own options.
type LinearParams struct {
	// Key is the public column singling people out; Secret is the secret
	// bit, a 0/1 column or a condition true where the bit is 1.
	Key, Secret string
	M           int
	MPerN       float64
	Solver      string
	MaxIn       int
	Seed        uint64
	// SumSecret are the bounds and grain of a numeric secret
	// (linear-reconstruction --sum): see linear_sum.go.
	SumSecret
}

// secretCondition is the predicate true for the people whose bit is 1: a
// column name (plain or double-quoted) means a 0/1 column equal to 1; any
// other text is a condition, taken as written ("y = 'yes'").
func (p *LinearParams) secretCondition() string {
	if name, err := ParseColumnName(p.Secret); err == nil {
		return pglex.QuoteIdent(name) + " = 1"
	}
	return "(" + strings.TrimSpace(p.Secret) + ")"
}

// exponentialMaxN is the largest group the exponential attack takes on:
// 2^12 = 4,096 queries, and 2^24 subset sums to check.
const exponentialMaxN = 12

// linearGroup is the prior information: the key's values in the group and
// how many people share each.
type linearGroup struct {
	values []string // SQL literals
	mult   []int
	people int
}

func linearParams(o Options) (*LinearParams, error) {
	p, ok := o.Params.(*LinearParams)
	if !ok || p == nil {
		return nil, errors.New("linear-reconstruction: no parameters")
	}
	if !IsIdentifier(o.Target.Table) || p.Key == "" {
		return nil, fmt.Errorf("linear-reconstruction: the table must be a plain SQL identifier and --key a column")
	}
	if o.Target.Sum != "" {
		if err := checkSumReconstruction(p); err != nil {
			return nil, err
		}
	} else if strings.TrimSpace(p.Secret) == "" {
		return nil, errors.New("linear-reconstruction: --secret is empty: give a 0/1 column or a condition (\"y = 'yes'\")")
	}
	if o.Background == "" {
		return nil, errors.New("linear-reconstruction needs the attacker's prior information: --public DB, a database with the group's public columns")
	}
	switch p.Solver {
	case "lp", "lsq", "exp":
	default:
		return nil, fmt.Errorf("--solver %q: want lp, lsq or exp", p.Solver)
	}
	if p.MaxIn < 1 {
		return nil, fmt.Errorf("--max-in %d: want at least 1", p.MaxIn)
	}
	return p, nil
}

// readGroup is step 1: the group's key values, read from the attacker's
// prior information (public columns only, never the secret).
func readGroup(ctx context.Context, path string, o Options, key string) (*linearGroup, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("opening the prior information: %w", err)
	}
	defer db.Close()
	q := "SELECT " + pglex.QuoteIdentAlways(key) + ", COUNT(*) FROM " + o.Target.Table
	if o.Target.Where != "" {
		q += " WHERE " + o.Target.Where
	}
	rows, err := db.QueryContext(ctx, q+" GROUP BY "+pglex.QuoteIdentAlways(key)+" ORDER BY "+pglex.QuoteIdentAlways(key))
	if err != nil {
		return nil, fmt.Errorf("reading the group's %s from the prior information: %w", key, err)
	}
	defer rows.Close()
	g := &linearGroup{}
	for rows.Next() {
		var v sql.NullString
		var c int
		if err := rows.Scan(&v, &c); err != nil {
			return nil, fmt.Errorf("reading the prior information: %w", err)
		}
		if !v.Valid {
			continue
		}
		g.values = append(g.values, Literal(v.String))
		g.mult = append(g.mult, c)
		g.people += c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the prior information: %w", err)
	}
	if len(g.values) == 0 {
		return nil, errors.New("the group is empty in the prior information: check --where")
	}
	return g, nil
}

// subsets is step 2: m random halves of the n values (each non-empty), or
// all 2^n - 1 non-empty subsets for the exponential attack.
func subsets(n, m int, solver string, seed uint64) [][]bool {
	if solver == "exp" {
		out := make([][]bool, 0, 1<<n-1)
		for mask := 1; mask < 1<<n; mask++ {
			s := make([]bool, n)
			for i := range s {
				s[i] = mask>>i&1 == 1
			}
			out = append(out, s)
		}
		return out
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c696e656172))
	out := make([][]bool, 0, m)
	for len(out) < m {
		s := make([]bool, n)
		any := false
		for i := range s {
			s[i] = rng.IntN(2) == 1
			any = any || s[i]
		}
		if any {
			out = append(out, s)
		}
	}
	return out
}

// subsetSQL is step 3's query for one subset.
func subsetSQL(o Options, p *LinearParams, g *linearGroup, s []bool) string {
	var in []string
	for i, v := range g.values {
		if s[i] {
			in = append(in, v)
		}
	}
	var lists []string
	for len(in) > 0 {
		k := min(p.MaxIn, len(in))
		lists = append(lists, pglex.QuoteIdent(p.Key)+" IN ("+strings.Join(in[:k], ", ")+")")
		in = in[k:]
	}
	cond := lists[0]
	if len(lists) > 1 {
		cond = "(" + strings.Join(lists, " OR ") + ")"
	}
	where := p.secretCondition() + " AND " + cond
	if o.Target.Sum != "" { // the secret is the summed value, not a condition
		where = cond
	}
	if o.Target.Where != "" {
		where = "(" + o.Target.Where + ") AND " + where
	}
	return "SELECT " + o.Target.aggregate() + " FROM " + o.Target.Table + " WHERE " + where
}

func (p *LinearParams) queries(n int) int {
	if p.M > 0 {
		return p.M
	}
	return max(1, int(math.Round(p.MPerN*float64(n))))
}

func linearPlan(ctx context.Context, o Options) (*LinearParams, *linearGroup, [][]bool, error) {
	p, err := linearParams(o)
	if err != nil {
		return nil, nil, nil, err
	}
	g, err := readGroup(ctx, o.Background, o, p.Key)
	if err != nil {
		return nil, nil, nil, err
	}
	if p.Solver == "exp" && len(g.values) > exponentialMaxN {
		return nil, nil, nil, fmt.Errorf("the exponential attack asks 2^n queries: the group has %d key values, more than %d (choose a smaller group or --solver lp)", len(g.values), exponentialMaxN)
	}
	return p, g, subsets(len(g.values), p.queries(g.people), p.Solver, p.Seed), nil
}

// askSubsets asks every subset's count, o.Pipeline at a time (the subsets
// are fixed in advance: the attack is not adaptive), and returns the
// answers with the subsets answered, a note when a stop cut them short, or
// the result that ends the attack at once (a policy's refusal of the
// subset SQL, a sum attack's first subset refused), or the error.
func askSubsets(ctx context.Context, q Querier, o Options, p *LinearParams, g *linearGroup, subs [][]bool) (answers []float64, asked [][]bool, note string, early *Result, err error) {
	var failed error
	byPolicy := false
	inBatches(ctx, q, o.Pipeline, len(subs), func(j int) string { return subsetSQL(o, p, g, subs[j]) },
		func(j int, rows *Rows, err error) bool {
			a, err := countOf(rows, err)
			if err != nil {
				if j == 0 && o.Target.Sum != "" {
					early = stoppedResult(err, 0)
				}
				if early == nil {
					note, byPolicy, failed = subsetRefusal(j, err)
				}
				return false
			}
			answers = append(answers, a)
			asked = append(asked, subs[j])
			if o.Progress != nil {
				o.Progress(j+1, len(subs))
			}
			return true
		})
	if byPolicy {
		// The policy refuses the subset SQL: the finding is which rule.
		st := SQLState(failed)
		early = &Result{Undecided: true,
			Note:    fmt.Sprintf("the firewall's policy refuses the subset queries (SQLSTATE %s: %v): this attack cannot be asked through it", st, failed),
			Details: map[string]any{"refused_by_policy": string(st)}}
		return nil, nil, "", early, nil
	}
	return answers, asked, note, early, failed
}

// subsetRefusal reads the error of subset count j: a stop keeps the answers
// so far (a note), a policy refusal of the first is the finding (byPolicy,
// with the refusal as failed), anything else fails the attack.
func subsetRefusal(j int, err error) (note string, byPolicy bool, failed error) {
	if j == 0 && !Stopped(err) {
		if st := SQLState(err); st == pgerror.InsufficientPrivilege || st == pgerror.ProgramLimitExceeded || st == pgerror.FeatureNotSupported {
			return "", true, err
		}
		return "", false, fmt.Errorf("asking the first subset count: %w", err)
	}
	if !Stopped(err) {
		return "", false, fmt.Errorf("asking subset count %d: %w", j+1, err)
	}
	return fmt.Sprintf("stopped after %d answers: %v; solved with those", j, err), false, nil
}

// linearScript is the whole attack as SQL (it is not adaptive); it needs
// the prior information to name the subsets.
func linearScript(o Options) []string {
	p, g, subs, err := linearPlan(context.Background(), o)
	if err != nil {
		return []string{"-- linear-reconstruction: " + err.Error()}
	}
	out := make([]string, len(subs))
	for j, s := range subs {
		out[j] = subsetSQL(o, p, g, s)
	}
	return out
}

func runLinearReconstruction(ctx context.Context, q Querier, o Options) (*Result, error) {
	p, g, subs, err := linearPlan(ctx, o)
	if err != nil {
		return nil, err
	}
	answers, asked, note, early, err := askSubsets(ctx, q, o, p, g, subs)
	if early != nil || err != nil {
		return early, err
	}
	res := &Result{Note: note, Details: map[string]any{
		"people": g.people, "unknowns": len(g.values), "queries_planned": len(subs),
		"answers": len(answers), "solver": p.Solver,
	}}
	if len(answers) == 0 {
		res.Undecided = true
		return res, nil
	}
	if o.Target.Sum != "" {
		return solveSumReconstruction(res, p, g, asked, answers)
	}
	var est []float64
	switch p.Solver {
	case "lp":
		est, err = solveMaxErrorLP(asked, answers, g.mult)
	case "lsq":
		est, err = risk.SolveSubsetSums(asked, answers, g.mult)
	case "exp":
		est = exponentialAttack(asked, answers, len(g.values))
	}
	if err != nil {
		return nil, err
	}
	// Step 5: round.
	ones := make([]int64, len(est))
	var total int64
	for i, x := range est {
		ones[i] = int64(math.Round(math.Max(0, math.Min(float64(g.mult[i]), x))))
		total += ones[i]
	}
	res.Recovered, res.Estimate = total, float64(total)
	res.Details["max_residual"] = maxResidual(asked, answers, ones)
	// Per key value: Answer is how many people share it, Estimate how many
	// of them the attack says have the bit.
	bins := make([]Bin, len(g.values))
	for i, v := range g.values {
		bins[i] = Bin{Value: v, Answer: int64(g.mult[i]), Estimate: ones[i]}
	}
	res.Details["bits"] = bins
	return res, nil
}

// maxResidual is max_j |a_j - (A b^)_j| for the rounded bits: how far the
// answers are from the reconstruction.
func maxResidual(subs [][]bool, answers []float64, ones []int64) float64 {
	worst := 0.0
	for j, s := range subs {
		var sum float64
		for i, in := range s {
			if in {
				sum += float64(ones[i])
			}
		}
		worst = math.Max(worst, math.Abs(answers[j]-sum))
	}
	return worst
}

// solveMaxErrorLP is the LP attack: minimise t subject to
// -t <= a_j - (A x)_j <= t and 0 <= x_i <= c_i, in gonum's standard form
// (equalities over non-negative variables x, t, two slacks per answer and
// one per bound).
func solveMaxErrorLP(subs [][]bool, answers []float64, caps []int) ([]float64, error) {
	fcaps := make([]float64, len(caps))
	for i, c := range caps {
		fcaps[i] = float64(c)
	}
	return solveMaxErrorLPReal(subs, answers, fcaps)
}

// solveMaxErrorLPReal is the LP attack with real caps: 0 <= x_i <= caps[i].
func solveMaxErrorLPReal(subs [][]bool, answers []float64, caps []float64) ([]float64, error) {
	m, n := len(subs), len(caps)
	cols := n + 1 + 2*m + n
	rows := 2*m + n
	A := mat.NewDense(rows, cols, nil)
	b := make([]float64, rows)
	for j, s := range subs {
		for i, in := range s {
			if in {
				A.Set(j, i, 1)
				A.Set(m+j, i, -1)
			}
		}
		A.Set(j, n, -1) //  (Ax)_j - t + s+_j = a_j
		A.Set(j, n+1+j, 1)
		b[j] = answers[j]
		A.Set(m+j, n, -1) // -(Ax)_j - t + s-_j = -a_j
		A.Set(m+j, n+1+m+j, 1)
		b[m+j] = -answers[j]
	}
	for i := range n {
		A.Set(2*m+i, i, 1) // x_i + u_i = c_i
		A.Set(2*m+i, n+1+2*m+i, 1)
		b[2*m+i] = caps[i]
	}
	c := make([]float64, cols)
	c[n] = 1
	_, x, err := lp.Simplex(c, A, b, 1e-9, nil)
	if err != nil {
		return nil, fmt.Errorf("solving the linear program: %w", err)
	}
	return x[:n], nil
}

// exponentialAttack is the inefficient Dinur-Nissim attack: of all 2^n bit
// vectors, the one whose subset sums are closest, in the max norm, to the
// answers. n <= exponentialMaxN, one person per key value.
func exponentialAttack(subs [][]bool, answers []float64, n int) []float64 {
	masks := make([]uint32, len(subs))
	for j, s := range subs {
		for i, in := range s {
			if in {
				masks[j] |= 1 << i
			}
		}
	}
	best, bestErr := uint32(0), math.Inf(1)
	for cand := uint32(0); cand < 1<<n; cand++ {
		worst := 0.0
		for j, mask := range masks {
			worst = math.Max(worst, math.Abs(answers[j]-float64(bits.OnesCount32(cand&mask))))
			if worst >= bestErr {
				break
			}
		}
		if worst < bestErr {
			best, bestErr = cand, worst
		}
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(best >> i & 1)
	}
	return out
}

// scoreLinearReconstruction reads the secret bits per key value from the
// truth: a value's c people are right for c - |estimate - truth| of them.
// It also gives the majority-class baseline: the share of bits a guess of
// the commoner bit for everyone gets right.
func scoreLinearReconstruction(ctx context.Context, truthPath string, o Options, r *Result) error {
	p, err := linearParams(o)
	if err != nil {
		return err
	}
	if o.Target.Sum != "" {
		return scoreSumReconstruction(ctx, truthPath, o, p, r)
	}
	db, err := sql.Open("sqlite", "file:"+truthPath+"?mode=ro")
	if err != nil {
		return fmt.Errorf("opening the truth database: %w", err)
	}
	defer db.Close()
	q := "SELECT " + pglex.QuoteIdentAlways(p.Key) + ", SUM(CASE WHEN " + p.secretCondition() + " THEN 1 ELSE 0 END), COUNT(*) FROM " + o.Target.Table
	if o.Target.Where != "" {
		q += " WHERE " + o.Target.Where
	}
	rows, err := db.QueryContext(ctx, q+" GROUP BY "+pglex.QuoteIdentAlways(p.Key))
	if err != nil {
		return fmt.Errorf("reading the secret bits from the truth database: %w", err)
	}
	defer rows.Close()
	truth := map[string][2]int64{}
	var ones, people int64
	for rows.Next() {
		var v sql.NullString
		var s, c int64
		if err := rows.Scan(&v, &s, &c); err != nil {
			return fmt.Errorf("reading the truth database: %w", err)
		}
		if v.Valid {
			truth[Literal(v.String)] = [2]int64{s, c}
		}
		ones += s
		people += c
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading the truth database: %w", err)
	}
	if r.Details == nil {
		r.Details = map[string]any{}
	}
	r.Details["baseline"] = float64(max(ones, people-ones)) / float64(max(people, 1))
	r.Truth = &ones
	if r.Undecided {
		return nil
	}
	right := 0
	bins, _ := r.Details["bits"].([]Bin)
	for i, bin := range bins {
		t := truth[bin.Value]
		tv := t[0]
		bins[i].Truth = &tv
		d := bin.Estimate - tv
		right += int(t[1] - max(d, -d))
	}
	success := float64(right) / float64(max(people, 1))
	exact := right == int(people)
	r.Exact = &exact
	r.CellsTotal, r.CellsExact, r.Success, r.Unit = int(people), &right, &success, "bits recovered exactly"
	return nil
}

package attacks

import (
	"context"
	"errors"
	"fmt"
	"github.com/spf13/pflag"
	"math"
	"strconv"
)

// IDPVariance is the variance test of Protivash et al. 5.1 against idp with
// plus_one, which adds 1 to the k-local sensitivity so that every answer
// carries noise: a threshold query is answered with Laplace noise of scale
// 2/epsilon* when its sensitivity is 1 and 1/epsilon* when it is 0. Asking
// the same query m times at a share epsilon* = epsilon/m each (a total of
// epsilon, however large m) and taking
//
//	psi_m = epsilon*^2 * sample variance of the m answers
//
// gives a statistic whose distribution depends on neither epsilon nor the
// count (Lemma 5.1): its mean is 8 under sensitivity 1 and 2 under
// sensitivity 0, and the test decides sensitivity 1 when psi_m >= 5. The
// paper reports accuracies of 80.3%, 98.8% and 100% at m = 10, 100, 1000
// (Table 1).
//
// The paper prints the centring term of psi_m as (z_1 + z_m)/m. Read
// literally, that is not the sample mean, and it does not reproduce Table 1:
// by simulation (4,000,000 trials, half at each scale) the literal reading
// gives 82.14% at m = 10 and 98.95% at m = 100, against the table's 80.30%
// and 98.82%; the sample mean (z_1 + ... + z_m)/m gives 80.39% and 98.83%
// (and 1/m instead of 1/(m-1) gives 78.21% and 98.70%). The proof of Lemma
// 5.1 calls the formula "the sample variance", so PsiM uses the sample mean.
//
// The query asked is the membership probe of Example 3.9, `COUNT(*) > k`
// over the target's rows, whose sensitivity is 1 exactly when 1 <= count <=
// 2k: for a person unique in the population, whether they are in the table.
// Against laplace the answers are plain 0s and 1s and psi_m is about 0: the
// test would always decide sensitivity 0, and as the firewall is not idp it
// recovers nothing and reports that decision as a guess.
var IDPVariance = &Attack{
	Name:    "idp-variance",
	Against: "idp",
	Source:  "Protivash et al. 5.1, Lemma 5.1, Table 1",
	Summary: "idp with plus_one still leaks: one threshold query asked m times, and the variance of the answers tells sensitivity 1 from 0",
	Script:  varianceScript,
	Run:     runVariance,
	Score:   scoreVariance,
	Demo: func() Options {
		// The demo person is in the table: the probe's sensitivity is 1.
		return Options{Target: Target{Table: "people", Where: demoPerson}, Threshold: ThresholdSetup{GroupK: -1}, M: defaultVarianceM}
	},
	Flags: func(f *pflag.FlagSet, o *Options) {
		thresholdFlags(f, o)
		f.IntVar(&o.M, "m", o.M, "how many times the test repeats its query")
	},
}

func init() { register(IDPVariance) }

const (
	// defaultVarianceM is the paper's largest m, where the test made no
	// error in 2,000,000 trials.
	defaultVarianceM = 1000
	// maxVarianceM bounds the queries of one test.
	maxVarianceM = 1_000_000
	// VarianceThreshold is the decision rule's cut between the means 2
	// (sensitivity 0) and 8 (sensitivity 1) of psi_m.
	VarianceThreshold = 5.0
)

// PsiM is the test statistic psi_m of the m answers z, each asked at the
// epsilon share share: share^2 times their sample variance (centred on the
// sample mean, divided by m-1).
func PsiM(z []float64, share float64) float64 {
	m := len(z)
	if m < 2 {
		return math.NaN()
	}
	var mean float64
	for _, v := range z {
		mean += v
	}
	mean /= float64(m)
	var ss float64
	for _, v := range z {
		ss += (v - mean) * (v - mean)
	}
	return share * share * ss / float64(m-1)
}

// varianceM is the m the test runs with.
func varianceM(o Options) (int, error) {
	m := o.M
	if m == 0 {
		m = defaultVarianceM
	}
	if m < 2 || m > maxVarianceM {
		return 0, fmt.Errorf("the variance test needs m between 2 and %d, not %d", maxVarianceM, m)
	}
	return m, nil
}

func varianceScript(o Options) []string {
	m, err := varianceM(o)
	if err != nil {
		return nil
	}
	var out []string
	if s := shareStatement(o.Threshold.Epsilon); s != "" {
		out = append(out, s)
	}
	sqlText := thresholdSQL(o.Target.Table, o.Target.Where, max(scriptK(o), 1))
	for range m {
		out = append(out, sqlText)
	}
	return out
}

func runVariance(ctx context.Context, q Querier, o Options) (*Result, error) {
	m, err := varianceM(o)
	if err != nil {
		return nil, err
	}
	ts, err := openTarget(ctx, q, o)
	if err != nil {
		return nil, err
	}
	share := ts.share
	b := max(ts.oracle.K, 1)
	sqlText := thresholdSQL(o.Target.Table, o.Target.Where, b)
	res := &Result{Undecided: true}
	// The m answers do not depend on one another: they are asked
	// o.Pipeline at a time.
	z := make([]float64, 0, m)
	exact, stopped := 0, false
	var failed error
	inBatches(ctx, q, o.Pipeline, m, func(int) string { return sqlText }, func(i int, rows *Rows, err error) bool {
		v, err := countOf(rows, err)
		if err != nil {
			if Stopped(err) {
				res.Note = fmt.Sprintf("stopped after %d of %d queries: %v", i, m, err)
				stopped = true
			} else {
				failed = err
			}
			return false
		}
		z = append(z, v)
		if v == 0 || v == 1 {
			exact++
		}
		if o.Progress != nil {
			o.Progress(i+1, m)
		}
		return true
	})
	if failed != nil {
		return nil, failed
	}
	res.Details = map[string]any{
		"m": m, "answers": len(z), "k": ts.oracle.K, "threshold": b, "epsilon_share": share,
		"epsilon_total": share * float64(len(z)), "exact_answers": exact, "decision_threshold": VarianceThreshold,
		"psi_reading": "sample mean",
	}
	if len(z) < 2 {
		res.Note = ts.notes(res.Note)
		return res, nil
	}
	psi := PsiM(z, share)
	res.Details["psi"] = psi
	decision := int64(0)
	if psi >= VarianceThreshold {
		decision = 1
	}
	res.Details["sensitivity"] = decision
	res.Details["verdict"] = fmt.Sprintf("sensitivity %d", decision) // the headline's words
	cmp, meaning := "<", fmt.Sprintf("sensitivity 0: the count is 0 or above %d", 2*b)
	if decision == 1 {
		cmp, meaning = ">=", fmt.Sprintf("sensitivity 1: 1 <= count <= %d, the target is in the table", 2*b)
	}
	found := fmt.Sprintf("psi_m = %s over %d answers (%s %g): %s", strconv.FormatFloat(psi, 'g', 4, 64), len(z), cmp, VarianceThreshold, meaning)
	if exact == len(z) {
		found += "; every answer was a plain 0 or 1: no noise at all, so the firewall is not idp with plus_one"
	}
	if stopped {
		ts.note = ts.notes(res.Note)
	}
	// The test reads idp's noise: only a firewall that runs idp (or one the
	// user vouched for by giving k) is read with certainty.
	ts.conclude(res, decision, found, ts.given || ts.mechanism == "idp")
	res.Estimate = psi
	return res, nil
}

// scoreVariance compares the decision with the probe's true k-local
// sensitivity (Lemma 3.3) from the target's true count and the table size.
func scoreVariance(ctx context.Context, path string, o Options, r *Result) error {
	k, ok1 := r.Details["k"].(int64)
	b, ok2 := r.Details["threshold"].(int64)
	if !ok1 || !ok2 {
		return errors.New("idp-variance: the result does not say which query it tested")
	}
	c, err := TrueCount(ctx, path, o.Target)
	if err != nil {
		return err
	}
	n, err := TrueCount(ctx, path, Target{Table: o.Target.Table})
	if err != nil {
		return err
	}
	// The idp model needs k >= 1; a firewall read as k = 0 is scored
	// against idp's default k = 1.
	sens := thresholdSensitivity(c, n, b, max(k, 1))
	setVerdictScore(r, sens)
	r.Details["true_count"] = c
	r.Details["true_sensitivity"] = sens
	return nil
}

// thresholdSensitivity is Lemma 3.3: the k-local sensitivity of
// `COUNT(*) > b` over c of n rows.
func thresholdSensitivity(c, n, b, k int64) int64 {
	if max(c-k, 0) <= b && b < min(c+k, n) {
		return 1
	}
	return 0
}

package attacks

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/spf13/pflag"

	"countwall/pglex"
)

// SplitAveraging is the classic attack on sticky noise (REFERENCES.md: the
// Diffix attacks of [CNSU20] part 2 and pg_diffix's own notes [PGD]): a
// mechanism that gives the same query the same noise cannot be averaged by
// repetition, so the attacker asks different queries with the same true
// answer. For a target condition C:
//
//  1. Choose s splitting conditions X_1..X_s, each dividing the rows in two
//     (here income < t_i for s distinct thresholds t_i).
//  2. For each X_i, ask (C AND X_i) and (C AND NOT X_i): their sum is the
//     count of C plus the noise of both answers.
//  3. Average the s sums. Noise whose seed changes with X_i (its condition
//     layer, the contributor-key layer of each half) averages away; noise
//     whose seed is the same in every query stays: under layered, the
//     layers seeded by C's own normalised conditions, counted twice (once
//     per half).
//  4. Repeat with each rewrite of C (ranges written differently, IN against
//     OR): if the firewall's normalisation misses a rewrite, C's layers get
//     new seeds and average away too. The error of each rewrite's mean and
//     of the mean over all of them against the truth says which.
//
// Under fresh noise (bounded, laplace) every layer averages away; under
// cellkey the noise depends on the contributors alone, and the two halves'
// keys change with X_i, so it averages away as well.
var SplitAveraging = &Attack{
	Name:    "split-averaging",
	Against: "layered",
	Source:  "Diffix literature; pg_diffix",
	Summary: "a count behind sticky noise as the mean of (C AND X_i) + (C AND NOT X_i) over many splits X_i, with C rewritten",
	Script:  splitScript,
	Run:     runSplitAveraging,
	Score:   scoreSplitAveraging,
	Demo: func() Options {
		// Women in their thirties, written three ways.
		return Options{
			Target: Target{Table: "people", Where: "sex = 'F' AND age BETWEEN 30 AND 39"},
			Params: &SplitParams{Splits: 50, SplitColumn: "income", SplitLo: 10000, SplitStep: 1000, Rewrites: []string{
				"sex = 'F' AND age >= 30 AND age <= 39",
				"sex = 'F' AND age IN (30, 31, 32, 33, 34, 35, 36, 37, 38, 39)",
				"(sex = 'F') AND (age > 29) AND (age < 40)",
			}},
		}
	},
	Flags: func(f *pflag.FlagSet, o *Options) {
		p := o.Params.(*SplitParams)
		f.IntVar(&p.Splits, "splits", p.Splits, "splitting conditions per form of the target")
		ColumnFlag(f, &p.SplitColumn, "split-column", "the integer column the splits cut: column < t_i")
		f.Int64Var(&p.SplitLo, "split-from", p.SplitLo, "the first threshold t_1")
		f.Int64Var(&p.SplitStep, "split-step", p.SplitStep, "the step between thresholds")
		f.StringArrayVar(&p.Rewrites, "rewrite", p.Rewrites, "another way to write the target predicate (repeat the flag)")
	},
}

func init() { register(SplitAveraging) }

// SplitParams are split-averaging's own options.
type SplitParams struct {
	// SumParams round a recovered sum (sum-split-averaging) to its grain.
	SumParams
	Splits             int
	SplitColumn        string
	SplitLo, SplitStep int64
	Rewrites           []string
}

func splitPlan(o Options) (*SplitParams, []string, error) {
	p, ok := o.Params.(*SplitParams)
	if !ok || p == nil {
		return nil, nil, errors.New("split-averaging: no parameters")
	}
	if o.Target.Where == "" {
		return nil, nil, errors.New("split-averaging needs a target predicate (--where)")
	}
	if p.Splits < 1 || p.SplitColumn == "" || !IsIdentifier(o.Target.Table) {
		return nil, nil, errors.New("split-averaging: --splits must be at least 1 and the table and --split-column plain SQL identifiers")
	}
	return p, append([]string{o.Target.Where}, p.Rewrites...), nil
}

// splitPair is step 2's two queries for form c and split i.
func splitPair(o Options, p *SplitParams, c string, i int) [2]string {
	x := fmt.Sprintf("%s < %d", pglex.QuoteIdent(p.SplitColumn), p.SplitLo+int64(i)*p.SplitStep)
	base := "SELECT " + o.Target.aggregate() + " FROM " + o.Target.Table + " WHERE (" + c + ") AND "
	return [2]string{base + x, base + "NOT (" + x + ")"}
}

func splitScript(o Options) []string {
	p, forms, err := splitPlan(o)
	if err != nil {
		return []string{"-- split-averaging: " + err.Error()}
	}
	var out []string
	for _, c := range forms {
		for i := range p.Splits {
			pair := splitPair(o, p, c, i)
			out = append(out, pair[0], pair[1])
		}
	}
	return out
}

// SplitForm is what one form of the target gave: its WHERE, the sum of
// each split pair and their mean (Details["forms"]).
type SplitForm struct {
	Where string    `json:"where"`
	Sums  []float64 `json:"sums"`
	Mean  float64   `json:"mean"`
}

func runSplitAveraging(ctx context.Context, q Querier, o Options) (*Result, error) {
	p, forms, err := splitPlan(o)
	if err != nil {
		return nil, err
	}
	var results []SplitForm
	var all []float64
	var note string
	steps, done := len(forms)*p.Splits, 0
forms:
	for _, c := range forms {
		f := SplitForm{Where: c}
		for i := range p.Splits {
			pair := splitPair(o, p, c, i)
			var sum float64
			for _, s := range pair {
				v, err := Count(ctx, q, s)
				if err != nil {
					if !Stopped(err) || len(all) == 0 && len(f.Sums) == 0 && done == 0 {
						return nil, fmt.Errorf("asking a split: %w", err)
					}
					note = fmt.Sprintf("stopped after %d splits: %v", done, err)
					if len(f.Sums) > 0 {
						f.Mean = meanOf(f.Sums)
						results = append(results, f)
					}
					break forms
				}
				sum += v
			}
			f.Sums = append(f.Sums, sum)
			all = append(all, sum)
			done++
			if o.Progress != nil {
				o.Progress(done, steps)
			}
		}
		f.Mean = meanOf(f.Sums)
		results = append(results, f)
	}
	if len(all) == 0 {
		return &Result{Undecided: true, Note: note}, nil
	}
	mean := meanOf(all)
	return &Result{Estimate: mean, Recovered: p.round(math.Max(0, mean)), Note: note,
		Details: map[string]any{"forms": results, "splits": p.Splits}}, nil
}

// SplitErrors are, for a run scored against truth, the error of the mean of
// the first n sums of the first form, for n = 1, 2, 4, ...: how the error
// falls (or stops falling) as the splits grow.
func SplitErrors(r *Result, truth int64) map[int]float64 {
	forms, _ := r.Details["forms"].([]SplitForm)
	out := map[int]float64{}
	if len(forms) == 0 {
		return out
	}
	sums := forms[0].Sums
	for n := 1; n <= len(sums); n *= 2 {
		out[n] = meanOf(sums[:n]) - float64(truth)
	}
	return out
}

// scoreSplitAveraging scores the overall mean against the true count and
// gives each form's error and the error as the splits grow.
func scoreSplitAveraging(ctx context.Context, truthPath string, o Options, r *Result) error {
	truth, err := TrueCount(ctx, truthPath, o.Target)
	if err != nil {
		return err
	}
	exact := !r.Undecided && r.Recovered == truth
	success := 0.0
	if exact {
		success = 1
	}
	r.Truth, r.Exact, r.Success = &truth, &exact, &success
	if r.Undecided {
		return nil
	}
	forms, _ := r.Details["forms"].([]SplitForm)
	errs := make([]float64, len(forms))
	for i, f := range forms {
		errs[i] = f.Mean - float64(truth)
	}
	r.Details["form_errors"] = errs
	r.Details["error_by_splits"] = SplitErrors(r, truth)
	return nil
}

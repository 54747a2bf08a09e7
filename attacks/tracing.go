package attacks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/pflag"

	"countwall/dataset"
	"countwall/proxy/risk"
)

// Tracing is the robust tracing attack of Dwork, Smith, Steinke and Ullman's
// survey (REFERENCES.md: [DSSU17], section 3.2, Figure 1; Dwork et al.
// 2015): from noisy one-way marginals q^ of a table of N people with D
// binary attributes, it tells whether a target y is in the table, given a
// single reference sample z from the same population. The marginals are
// "1/2-accurate" or better whatever the mechanism; what counts is D/N.
//
//  1. Read the attacker's knowledge (the population file `countwall gen
//     genomes` writes beside the table): reference samples z_0, z_1, ...
//     from the population, not in the table, and the targets' data.
//  2. Ask the one-way marginals: SELECT snp, COUNT(*) ... WHERE allele = 1
//     GROUP BY snp over the declared domain of snp (one query), or D
//     single counts (--singles); q^_j = 2 c_j / N - 1 in the survey's
//     +-1 encoding.
//  3. Score each target y with <y - z_0, q^> (Figure 1), or, with m > 0
//     reference samples (--references, Theorem 15's variant), with
//     <y - z_0, q^ - p^>, p^ the mean of z_1..z_m.
//  4. Output IN when the score is at least T. T is given (--threshold), or
//     set where the attacker can: at the (1 - fpr) quantile of the scores
//     of reference samples not used above, non-members all.
//
// The result gives the true-positive rate on the member targets, the
// false-positive rate on the held-out non-members, and the ROC area.
//
// What a GROUP BY over D cells costs a person with a row in every cell:
// laplace (today) charges epsilon once for the histogram and adds noise of
// scale 1/epsilon to each cell, the guarantee of one row per unit; a person
// here changes D cells by one each, so the histogram protects them at D x
// epsilon, not epsilon. The ledger's claim and the person's loss differ by
// the factor D until contributions are bounded per person.
var Tracing = &Attack{
	Name:    "tracing",
	Against: "noisy marginals",
	Source:  "Dwork et al. survey 3.2, Fig. 1, Thm. 14-15",
	Summary: "whether a person is in a table of binary attributes, from its noisy one-way marginals and one reference sample",
	Script:  tracingScript,
	Run:     runTracing,
	Score:   func(context.Context, string, Options, *Result) error { return nil }, // scored in Run, from the population file
	Demo: func() Options {
		return Options{Target: Target{Table: dataset.GenomesTableName},
			Params: &TracingParams{References: 100, FPR: 0.05, Threshold: math.NaN()}}
	},
	Flags: func(f *pflag.FlagSet, o *Options) {
		p := o.Params.(*TracingParams)
		f.StringVar(&o.Background, "population", o.Background, "the population file written by `countwall gen genomes` (FILE.population.json)")
		f.IntVar(&p.References, "references", p.References, "reference samples whose mean centres q^ (Theorem 15); 0: Figure 1, the single sample z_0")
		f.Float64Var(&p.Threshold, "threshold", p.Threshold, "the threshold T (default: calibrated on reference samples at --fpr)")
		f.Float64Var(&p.FPR, "fpr", p.FPR, "the false-positive rate T is calibrated to on reference samples")
		f.BoolVar(&p.Singles, "singles", p.Singles, "ask D single counts instead of one GROUP BY")
		f.Float64Var(&p.Epsilon, "epsilon-share", p.Epsilon, "the per-query epsilon to ask for with SET epsilon (0: the session's)")
	},
}

func init() { register(Tracing) }

// TracingParams are tracing's own options.
type TracingParams struct {
	References int
	Threshold  float64 // NaN: calibrate at FPR
	FPR        float64
	Singles    bool
	Epsilon    float64
}

func tracingPlan(o Options) (*TracingParams, *dataset.Population, error) {
	p, ok := o.Params.(*TracingParams)
	if !ok || p == nil {
		return nil, nil, errors.New("tracing: no parameters")
	}
	if o.Background == "" {
		return nil, nil, errors.New("tracing needs the attacker's knowledge: --population FILE (written by countwall gen genomes)")
	}
	if !IsIdentifier(o.Target.Table) {
		return nil, nil, errors.New("tracing: the table must be a plain SQL identifier")
	}
	pop, err := dataset.ReadPopulation(o.Background)
	if err != nil {
		return nil, nil, err
	}
	if len(pop.References) < p.References+2 {
		return nil, nil, fmt.Errorf("tracing: %d reference samples, %d asked for plus z_0 and one to calibrate T", len(pop.References), p.References)
	}
	return p, pop, nil
}

func marginalsSQL(o Options, p *TracingParams, d int) []string {
	if !p.Singles {
		return []string{"SELECT snp, COUNT(*) FROM " + o.Target.Table + " WHERE " + o.where("allele = 1") +
			" GROUP BY snp ORDER BY snp"}
	}
	out := make([]string, d)
	for j := range out {
		out[j] = "SELECT COUNT(*) FROM " + o.Target.Table + " WHERE " + o.where("allele = 1 AND snp = "+strconv.Itoa(j+1))
	}
	return out
}

func tracingScript(o Options) []string {
	p, pop, err := tracingPlan(o)
	if err != nil {
		return []string{"-- tracing: " + err.Error()}
	}
	return marginalsSQL(o, p, pop.SNPs)
}

func runTracing(ctx context.Context, q Querier, o Options) (*Result, error) {
	p, pop, err := tracingPlan(o)
	if err != nil {
		return nil, err
	}
	if p.Epsilon > 0 {
		if _, err := sessionQuery(ctx, q, "SET epsilon = "+strconv.FormatFloat(p.Epsilon, 'g', -1, 64)); err != nil {
			return nil, fmt.Errorf("asking for an epsilon share of %g: %w", p.Epsilon, err)
		}
	}
	// Step 2.
	counts, note, err := askMarginals(ctx, q, o, p, pop)
	if err != nil {
		return nil, err
	}
	// Steps 3 and 4.
	score, T := risk.TracingTest(pop.References, pop.People, p.References, p.FPR, p.Threshold, counts)
	in := make([]float64, len(pop.Members))
	out := make([]float64, len(pop.NonMembers))
	tp, fp := 0, 0
	for i, g := range pop.Members {
		if in[i] = score(g); in[i] >= T {
			tp++
		}
	}
	for i, g := range pop.NonMembers {
		if out[i] = score(g); out[i] >= T {
			fp++
		}
	}
	tpr := float64(tp) / float64(max(len(in), 1))
	fpr := float64(fp) / float64(max(len(out), 1))
	right := tp + len(out) - fp
	success := float64(right) / float64(len(in)+len(out))
	d := pop.SNPs
	return &Result{Estimate: tpr, Recovered: int64(tp), Note: note,
		CellsTotal: len(in) + len(out), CellsExact: &right, Unit: "people classified right", Success: &success,
		Details: map[string]any{"tpr": tpr, "fpr": fpr, "auc": ROCArea(in, out), "threshold": T,
			"members": len(in), "non_members": len(out), "people": pop.People, "snps": d,
			"d_over_n": float64(d) / float64(pop.People), "references": p.References}}, nil
}

// askMarginals asks each SNP's count of minor alleles. When the firewall
// stops the attack after the first answer, the rest stay at N/2 and the note
// says so.
func askMarginals(ctx context.Context, q Querier, o Options, p *TracingParams, pop *dataset.Population) ([]float64, string, error) {
	d := pop.SNPs
	counts := make([]float64, d)
	var note string
	for i, s := range marginalsSQL(o, p, d) {
		rows, err := q.Query(ctx, s)
		if err != nil {
			if i == 0 || !Stopped(err) {
				return nil, "", fmt.Errorf("asking the marginals: %w", err)
			}
			// The rest stay at N/2 (q^_j = 0): they say nothing.
			note = fmt.Sprintf("stopped after %d of %d marginals: %v", i, d, err)
			for j := i; j < d; j++ {
				counts[j] = float64(pop.People) / 2
			}
			break
		}
		if p.Singles {
			counts[i], _ = rows.Float(0, len(rows.Columns)-1)
			continue
		}
		for r, row := range rows.Values {
			j, err := strconv.Atoi(row[0])
			if err != nil || j < 1 || j > d {
				continue
			}
			counts[j-1], _ = rows.Float(r, len(row)-1)
		}
	}
	return counts, note, nil
}

// ROCArea is the area under the ROC curve of scores for positives against
// negatives: the chance that a random positive scores above a random
// negative (ties count half), the Mann-Whitney statistic.
func ROCArea(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	var wins float64
	for _, a := range pos {
		for _, b := range neg {
			switch {
			case a > b:
				wins++
			case a == b:
				wins += 0.5
			}
		}
	}
	return wins / float64(len(pos)*len(neg))
}

package attacks

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/pflag"

	"countwall/proxy/risk"
)

// PerturbationFinder finds the hidden noise bound D of a sticky bounded-noise
// mechanism (Asghar and Kaafar, Algorithm 3 with the min/max refinement).
// For each of m cells b_i it asks b_i AND a1, b_i AND a2 and b_i, where a1
// and a2 split b_i in two: z = M(b_i,a1) + M(b_i,a2) - M(b_i) is the sum of
// three noise terms, and the most extreme z over the m cells reveals D. With
// t = 3m queries it succeeds with probability 1-(1-20/(2D+1)^3)^m
// (Proposition 2).
var PerturbationFinder = &Attack{
	Name:    "perturbation-finder",
	Against: "cellkey",
	Source:  "Asghar-Kaafar Alg. 3, Prop. 2",
	Summary: "the hidden noise bound D of sticky bounded noise, from m triples of cells",
	Script:  perturbationScript,
	Run: func(ctx context.Context, q Querier, o Options) (*Result, error) {
		script := perturbationScript(o)
		if len(script) == 0 {
			return nil, fmt.Errorf("perturbation-finder needs cells (--cells) and a two-way split (--split)")
		}
		zMin, zMax := math.Inf(1), math.Inf(-1)
		absMin, absMax := math.Inf(1), math.Inf(-1)
		var stopped error
	cells:
		for i := 0; i+2 < len(script); i += 3 {
			var z [3]float64
			for j := range z {
				v, err := Count(ctx, q, script[i+j])
				if Stopped(err) {
					// A spent budget ends the attack with the triples it has.
					stopped = fmt.Errorf("stopped at cell %d: %w", i/3+1, err)
					break cells
				}
				if err != nil {
					return nil, fmt.Errorf("cell %d: %w", i/3+1, err)
				}
				z[j] = v
			}
			if z[0] == 0 || z[1] == 0 {
				continue // a suppressed part says nothing about the noise
			}
			d := z[0] + z[1] - z[2]
			zMin, zMax = math.Min(zMin, d), math.Max(zMax, d)
			absMin, absMax = math.Min(absMin, math.Abs(d)), math.Max(absMax, math.Abs(d))
		}
		if math.IsInf(zMax, 0) {
			if stopped != nil {
				return &Result{Note: stopped.Error() + "; no triple was complete, so D is not estimated"}, nil
			}
			return nil, fmt.Errorf("every cell was suppressed; choose larger cells")
		}
		guess, note := risk.NoiseBound(zMin, zMax, absMin, absMax, len(script)/3)
		if stopped != nil {
			note = stopped.Error() + "; " + note
		}
		return &Result{Estimate: guess, Recovered: int64(guess), Note: note}, nil
	},
	// D is a parameter of the mechanism, not a fact of the data, so the
	// protected database cannot score the guess; whoever knows the config
	// (the demo) compares it.
	Score: func(context.Context, string, Options, *Result) error { return nil },
	Demo: func() Options {
		// The 100 most populous suburbs: disjoint cells, each split by sex.
		cells := make([]string, 100)
		for i := range cells {
			cells[i] = fmt.Sprintf("suburb = 'suburb_%04d'", i+1)
		}
		return Options{Target: Target{Table: "people"}, Cells: cells, Split: []string{"sex = 'F'", "sex = 'M'"}}
	},
	Flags: func(f *pflag.FlagSet, o *Options) {
		f.StringArrayVar(&o.Cells, "cells", o.Cells, "cell predicates over disjoint contributors (repeat the flag; default: the 100 most populous suburbs)")
		f.StringArrayVar(&o.Split, "split", o.Split, "two predicates that divide every cell")
	},
}

// perturbationScript is the 3m queries: for each cell predicate, the cell
// with each half of the split, then the cell itself.
func perturbationScript(o Options) []string {
	if len(o.Cells) == 0 || len(o.Split) != 2 {
		return nil
	}
	var out []string
	for _, cell := range o.Cells {
		for _, where := range []string{
			cell + " AND " + o.Split[0],
			cell + " AND " + o.Split[1],
			cell,
		} {
			out = append(out, Target{Table: o.Target.Table, Where: strings.TrimSpace(where)}.querySQL())
		}
	}
	return out
}

func init() { register(PerturbationFinder) }

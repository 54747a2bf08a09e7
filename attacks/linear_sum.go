package attacks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/spf13/pflag"

	"countwall/pglex"
	"countwall/proxy/risk"
)

// linear-reconstruction --sum COLUMN is the reconstruction attack on a
// numeric secret (REFERENCES.md: [DN03] and [DSSU17] state it for subset
// sums of any bounded values; the bits are the special case). Each query
// is SUM(col) over a random half of the group's key values; the unknowns
// are each key value's sum x_i in [c_i min, c_i max] (c_i people share the
// value), real numbers. Least squares solves them with an error of about
// 2 sigma / sqrt(m) per unknown for answers with noise sigma over m random
// halves, so a value comes out to within half its grain once m exceeds
// (4 sigma / grain)^2: the queries per person grow with the square of the
// noise scale against the grain. The LP attack bounds the max error.

// SumSecret are a numeric secret's public bounds (the config's
// tables.NAME.bounds) and grain, for linear-reconstruction --sum.
type SumSecret struct {
	SumParams
	Min, Max float64
}

func sumSecretFlags(f *pflag.FlagSet, o *Options, p *SumSecret) {
	sumFlags(f, o, &p.SumParams)
	f.Float64Var(&p.Min, "value-min", p.Min, "with --sum: the least value of the summed column (its public bounds)")
	f.Float64Var(&p.Max, "value-max", p.Max, "with --sum: the greatest value of the summed column (its public bounds)")
}

func checkSumReconstruction(p *LinearParams) error {
	switch {
	case p.Solver == "exp":
		return errors.New("--solver exp searches bit vectors: a summed secret takes lp or lsq")
	case !(p.Max > p.Min):
		return fmt.Errorf("--value-max %g must be above --value-min %g: the summed column's public bounds", p.Max, p.Min)
	}
	return nil
}

// solveSumReconstruction solves the answered subset sums for every key
// value's sum and rounds each to the grain.
func solveSumReconstruction(res *Result, p *LinearParams, g *linearGroup, asked [][]bool, answers []float64) (*Result, error) {
	n := len(g.values)
	lo, hi := make([]float64, n), make([]float64, n)
	for i, c := range g.mult {
		lo[i], hi[i] = float64(c)*p.Min, float64(c)*p.Max
	}
	var est []float64
	var err error
	if p.Solver == "lp" {
		// Shifted to x - lo, whose bounds are [0, hi - lo].
		shifted, caps := make([]float64, len(answers)), make([]float64, n)
		for i := range caps {
			caps[i] = hi[i] - lo[i]
		}
		for j, s := range asked {
			shifted[j] = answers[j]
			for i, in := range s {
				if in {
					shifted[j] -= lo[i]
				}
			}
		}
		if est, err = solveMaxErrorLPReal(asked, shifted, caps); err == nil {
			for i := range est {
				est[i] += lo[i]
			}
		}
	} else {
		est, err = risk.SolveBoundedSums(asked, answers, lo, hi)
	}
	if err != nil {
		return nil, err
	}
	bins := make([]Bin, n)
	var total float64
	for i, v := range g.values {
		bins[i] = Bin{Value: v, Answer: int64(g.mult[i]), Estimate: p.round(est[i])}
		total += est[i]
	}
	res.Estimate, res.Recovered = total, p.round(total)
	res.Details["values"] = bins
	res.Details["residual_rms"] = residualRMS(asked, answers, est)
	res.Details["queries_per_person"] = float64(len(answers)) / float64(g.people)
	return res, nil
}

// residualRMS is the root mean square of a_j - (A x)_j: the attacker's
// reading of the noise scale, since the solution fits all but the noise.
func residualRMS(subs [][]bool, answers, x []float64) float64 {
	var ss float64
	for j, s := range subs {
		d := answers[j]
		for i, in := range s {
			if in {
				d -= x[i]
			}
		}
		ss += d * d
	}
	return math.Sqrt(ss / float64(max(len(subs), 1)))
}

// scoreSumReconstruction reads every key value's true sum: a value is
// recovered when its estimate, rounded to the grain, is the truth; the
// mean absolute error says how near the others came.
func scoreSumReconstruction(ctx context.Context, truthPath string, o Options, p *LinearParams, r *Result) error {
	db, err := sql.Open("sqlite", "file:"+truthPath+"?mode=ro")
	if err != nil {
		return fmt.Errorf("opening the truth database: %w", err)
	}
	defer db.Close()
	key := pglex.QuoteIdentAlways(p.Key)
	q := "SELECT " + key + ", SUM(" + pglex.QuoteIdentAlways(o.Target.Sum) + ") FROM " + o.Target.Table
	if o.Target.Where != "" {
		q += " WHERE " + o.Target.Where
	}
	rows, err := db.QueryContext(ctx, q+" GROUP BY "+key)
	if err != nil {
		return fmt.Errorf("reading the secret sums from the truth database: %w", err)
	}
	defer rows.Close()
	truth := map[string]float64{}
	var total float64
	for rows.Next() {
		var v sql.NullString
		var s sql.NullFloat64
		if err := rows.Scan(&v, &s); err != nil {
			return fmt.Errorf("reading the truth database: %w", err)
		}
		if v.Valid {
			truth[Literal(v.String)] = s.Float64
		}
		total += s.Float64
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading the truth database: %w", err)
	}
	t := int64(math.Round(total))
	r.Truth = &t
	bins, _ := r.Details["values"].([]Bin)
	if r.Undecided || len(bins) == 0 {
		return nil
	}
	right, absErr := 0, 0.0
	for i, bin := range bins {
		tv := int64(math.Round(truth[bin.Value]))
		bins[i].Truth = &tv
		if bin.Estimate == tv {
			right++
		}
		absErr += math.Abs(float64(bin.Estimate - tv))
	}
	success := float64(right) / float64(len(bins))
	exact := right == len(bins)
	r.Exact, r.Success = &exact, &success
	r.CellsTotal, r.CellsExact, r.Unit = len(bins), &right, "values recovered to the grain"
	r.Details["mean_abs_error"] = absErr / float64(len(bins))
	return nil
}

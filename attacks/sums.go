package attacks

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/spf13/pflag"
)

// The sum attacks (sum-differencing, sum-averaging, sum-split-averaging,
// linear-reconstruction --sum) go after SUM(col) as the count attacks go
// after COUNT(*): Target.Sum names the column. A firewall that refuses a
// sum (a mechanism that does not answer SUM, a spent budget) stops them
// with what they had, which is a result, not a failure: "stopped: refused".

// SumAnswer runs a single-cell query whose last column is a SUM and returns
// its answer; withheld is true when the firewall sent NULL there (a cell it
// suppressed, or the sum of no value), read as 0.
func SumAnswer(ctx context.Context, q Querier, sql string) (v float64, withheld bool, err error) {
	rows, err := q.Query(ctx, sql)
	if err != nil {
		return 0, false, err
	}
	if len(rows.Values) != 1 || len(rows.Values[0]) == 0 {
		return 0, false, fmt.Errorf("expected one row, got %d", len(rows.Values))
	}
	last := len(rows.Columns) - 1
	if rows.Values[0][last] == "" {
		return 0, true, nil
	}
	v, err = rows.Float(0, last)
	return v, false, err
}

// refusal is the SQLSTATE of an answer the firewall refused, or of one the
// run's own limits stopped ("" for a failure of another kind: a broken
// connection, an answer that cannot be read).
func refusal(err error) string {
	if st := SQLState(err); st != "" {
		return string(st)
	}
	if errors.Is(err, ErrQueryLimit) || errors.Is(err, ErrInterrupted) {
		return "limit"
	}
	return ""
}

// stoppedResult is the result of a run the firewall stopped after answers
// answers: no verdict, and the refusal said in the note. It is nil when err
// is no refusal, which the caller then returns as the error it is.
func stoppedResult(err error, answers int) *Result {
	st := refusal(err)
	if st == "" {
		return nil
	}
	return &Result{Undecided: true,
		Note:    fmt.Sprintf("stopped: refused after %d answers (%v)", answers, err),
		Details: map[string]any{"refused": st, "answers": answers}}
}

// SumParams are what the sum attacks share: the grain of the summed
// column's values, which the attacker knows from its documentation (income
// is rounded to 100), and to which a recovered sum is rounded.
type SumParams struct {
	Grain float64
}

// round is v to the nearest multiple of the grain (of 1 when none is set).
func (p *SumParams) round(v float64) int64 {
	g := p.grain()
	return int64(math.Round(v/g) * g)
}

func (p *SumParams) grain() float64 {
	if p == nil || p.Grain <= 0 {
		return 1
	}
	return p.Grain
}

// sumFlags declares --sum (the summed column) and --grain.
func sumFlags(f *pflag.FlagSet, o *Options, p *SumParams) {
	ColumnFlag(f, &o.Target.Sum, "sum", "the numeric column whose SUM over the target is the secret")
	f.Float64Var(&p.Grain, "grain", p.Grain, "the step of the column's values (100: incomes rounded to 100); a recovered sum is rounded to it")
}

// scoreSum scores a sum attack against the true sum: exact when the
// recovered sum, rounded to the grain, is the truth; the error and the
// relative error of the estimate in Details.
func scoreSum(ctx context.Context, truthPath string, o Options, r *Result) error {
	truth, err := TrueValue(ctx, truthPath, o.Target)
	if err != nil {
		return err
	}
	t := int64(math.Round(truth))
	exact := !r.Undecided && r.Recovered == t
	success := 0.0
	if exact {
		success = 1
	}
	r.Truth, r.Exact, r.Success = &t, &exact, &success
	if r.Undecided {
		return nil
	}
	if r.Details == nil {
		r.Details = map[string]any{}
	}
	r.Details["error"] = r.Estimate - truth
	if truth != 0 {
		r.Details["relative_error"] = math.Abs(r.Estimate-truth) / math.Abs(truth)
	}
	return nil
}

// sumTarget checks that o asks a sum: the sum attacks need --sum.
func sumTarget(name string, o Options) error {
	if o.Target.Sum == "" {
		return fmt.Errorf("%s needs the summed column (--sum)", name)
	}
	if !IsIdentifier(o.Target.Table) {
		return fmt.Errorf("%s: the table must be a plain SQL identifier", name)
	}
	return nil
}

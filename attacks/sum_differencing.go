package attacks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/pflag"

	"countwall/pglex"
)

// SumDifferencing recovers a sum a magnitude table withholds (Hundepool et
// al., Statistical Disclosure Control, 4.2-4.3; Asghar and Kaafar 2.2 for
// counts). A cell's sum is suppressed for too few contributors or because
// one of them dominates it, but the table's total and the total of the
// cell's complement have many contributors and none dominant, so both are
// published, and their difference is the cell's sum. The attack asks the
// cell first, as an analyst would, and says whether it was withheld (three
// queries in all). Secondary suppression guards the margins of one GROUP
// BY; it does not see two queries with different WHERE clauses.
//
// The p% rule suppresses a cell whose largest contribution x1 the
// second-largest contributor could estimate, from the cell's sum, within p%:
// sum - x2 - x1 < p/100 x1. Given the attacker's own record (--own, a
// predicate read in the prior information: the attacker knows their own
// value x2), the attack goes on as that contributor would, with the sum the
// rule withheld: x1 is estimated as sum - x2, which is exact when the cell
// has two contributors and within p% of x1 whenever the rule fired.
var SumDifferencing = &Attack{
	Name:    "sum-differencing",
	Against: "suppress",
	Source:  "Hundepool et al. SDC 4.2; Asghar-Kaafar 2.2",
	Summary: "a suppressed sum as the total minus the sum of its complement; with --own, the largest contribution as that sum minus the attacker's own",
	Script:  sumDifferencingScript,
	Run:     runSumDifferencing,
	Score:   scoreSumDifferencing,
	Demo: func() Options {
		// 25 students of suburb_0032 (seed 1), two of them earning: a cell
		// the p% rule suppresses, and its second earner (id 3057) attacking.
		return Options{
			Target: Target{Table: "people", Where: "suburb = 'suburb_0032' AND occupation = 'student'", Sum: "income"},
			Params: &SumDifferencingParams{SumParams: SumParams{Grain: 100}, Own: "id = 3057", Unit: "id"},
		}
	},
	Flags: func(f *pflag.FlagSet, o *Options) {
		p := o.Params.(*SumDifferencingParams)
		sumFlags(f, o, &p.SumParams)
		f.StringVar(&o.Background, "public", o.Background, "the attacker's prior information: a database holding the attacker's own record (--own)")
		f.StringVar(&p.Own, "own", p.Own, `the attacker's own record in the target, as a predicate ("id = 3057"): estimate the largest contribution as the cell's sum less the attacker's ("" for the sum alone)`)
		ColumnFlag(f, &p.Unit, "unit", "the privacy unit column, whose rows make one contribution (scoring only)")
	},
}

func init() { register(SumDifferencing) }

// SumDifferencingParams are sum-differencing's own options.
type SumDifferencingParams struct {
	SumParams
	// Own is the attacker's own record as a predicate; Unit the column
	// whose rows are one contributor, for scoring the largest contribution.
	Own, Unit string
}

func sumDifferencingParams(o Options) (*SumDifferencingParams, error) {
	p, ok := o.Params.(*SumDifferencingParams)
	if !ok || p == nil {
		return nil, errors.New("sum-differencing: no parameters")
	}
	if err := sumTarget("sum-differencing", o); err != nil {
		return nil, err
	}
	if o.Target.Where == "" {
		return nil, errors.New("sum-differencing needs a target predicate (--where)")
	}
	if p.Own != "" && o.Background == "" {
		return nil, errors.New("sum-differencing --own reads the attacker's own value from the prior information: give --public DB")
	}
	return p, nil
}

func sumDifferencingScript(o Options) []string {
	return []string{
		o.Target.querySQL(),
		Target{Table: o.Target.Table, Sum: o.Target.Sum}.querySQL(),
		Target{Table: o.Target.Table, Sum: o.Target.Sum, Where: "NOT (" + o.Target.Where + ")"}.querySQL(),
	}
}

func runSumDifferencing(ctx context.Context, q Querier, o Options) (*Result, error) {
	p, err := sumDifferencingParams(o)
	if err != nil {
		return nil, err
	}
	var own float64
	ownNote := ""
	if p.Own != "" {
		switch own, err = ownValue(ctx, o, p.Own); {
		case errors.Is(err, errOwnNotInTarget):
			// The sum can still be recovered; only the estimate of the
			// largest contribution needs the attacker among the
			// contributors (the demo's attacker, on a table of another
			// size, is not).
			ownNote = "--own matches no contributor of the target in the prior information: the largest contribution was not estimated"
		case err != nil:
			return nil, err
		}
	}
	script := sumDifferencingScript(o)
	names := []string{"cell", "total", "complement"}
	var answers [3]float64
	var cellWithheld bool
	for i, s := range script {
		v, withheld, err := SumAnswer(ctx, q, s)
		if err != nil {
			if r := stoppedResult(err, i); r != nil {
				return r, nil
			}
			return nil, fmt.Errorf("asking the %s: %w", names[i], err)
		}
		if withheld && i == 0 {
			cellWithheld = true
		} else if withheld {
			return &Result{Undecided: true, Note: fmt.Sprintf("stopped: the %s's sum was withheld", names[i]),
				Details: map[string]any{"cell_withheld": cellWithheld}}, nil
		}
		answers[i] = v
	}
	est := answers[1] - answers[2]
	res := &Result{Estimate: est, Recovered: p.round(est),
		Details: map[string]any{"cell_withheld": cellWithheld, "total": answers[1], "complement": answers[2]}}
	if cellWithheld {
		res.Note = "the cell's own sum was withheld; the total less its complement gave it"
	}
	if ownNote != "" {
		res.Note = strings.TrimPrefix(res.Note+"; "+ownNote, "; ")
	} else if p.Own != "" {
		res.Details["own"] = own
		res.Details["largest_estimate"] = est - own
	}
	return res, nil
}

// errOwnNotInTarget is --own matching no contributor of the target.
var errOwnNotInTarget = errors.New("--own matches no row of the target in the prior information: the attacker must be one of its contributors")

// ownValue is the attacker's own contribution to the target: the sum of
// their rows, read in the prior information (never through the firewall).
func ownValue(ctx context.Context, o Options, own string) (float64, error) {
	db, err := sql.Open("sqlite", "file:"+o.Background+"?mode=ro")
	if err != nil {
		return 0, fmt.Errorf("opening the prior information: %w", err)
	}
	defer db.Close()
	where := "(" + own + ")"
	if o.Target.Where != "" {
		where = "(" + o.Target.Where + ") AND " + where
	}
	var n int
	var v sql.NullFloat64
	q := "SELECT COUNT(*), SUM(" + pglex.QuoteIdentAlways(o.Target.Sum) + ") FROM " + o.Target.Table + " WHERE " + where
	if err := db.QueryRowContext(ctx, q).Scan(&n, &v); err != nil {
		return 0, fmt.Errorf("reading the attacker's own record (--own) in the prior information: %w", err)
	}
	if n == 0 {
		return 0, errOwnNotInTarget
	}
	return v.Float64, nil
}

// scoreSumDifferencing scores the recovered sum and, with --own, the
// estimate of the largest contribution against the truth: its error, as a
// share of the largest, is what the p% rule promised to keep above p%.
func scoreSumDifferencing(ctx context.Context, truthPath string, o Options, r *Result) error {
	if err := scoreSum(ctx, truthPath, o, r); err != nil {
		return err
	}
	p, _ := o.Params.(*SumDifferencingParams)
	est, ok := r.Details["largest_estimate"].(float64)
	if r.Undecided || p == nil || p.Own == "" || p.Unit == "" || !ok {
		return nil
	}
	largest, err := largestContribution(ctx, truthPath, o, p.Unit)
	if err != nil {
		return err
	}
	r.Details["largest"] = largest
	if largest != 0 {
		r.Details["largest_relative_error"] = math.Abs(est-largest) / math.Abs(largest)
	}
	return nil
}

// largestContribution is the largest of the target's contributions, each
// the sum of one unit's rows, read from the truth.
func largestContribution(ctx context.Context, truthPath string, o Options, unit string) (float64, error) {
	db, err := sql.Open("sqlite", "file:"+truthPath+"?mode=ro")
	if err != nil {
		return 0, fmt.Errorf("opening the truth database: %w", err)
	}
	defer db.Close()
	u := pglex.QuoteIdentAlways(unit)
	q := strings.Join([]string{"SELECT MAX(s) FROM (SELECT SUM(", pglex.QuoteIdentAlways(o.Target.Sum), ") AS s FROM ",
		o.Target.Table, " WHERE ", o.Target.Where, " GROUP BY ", u, ")"}, "")
	var v sql.NullFloat64
	if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the largest contribution from the truth database: %w", err)
	}
	return v.Float64, nil
}

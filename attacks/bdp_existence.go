package attacks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"countwall/pglex"
)

// BDPExistence finds which combinations of values of some columns occur in
// the table behind bdp (Protivash et al. 4, Lemma 4.5). The bootstrap
// sensitivity of a count is 0 when no record or every record satisfies the
// predicate, and 1 otherwise, so at a tiny epsilon share a plain
// `SELECT COUNT(*) FROM t WHERE col1 = a AND col2 = b ...` is the exact 0
// when the combination is absent and a wildly noisy number (or, when every
// record has it, the exact table size) when it exists. One query per
// combination recovers the table's distinct combinations, never their
// multiplicities, at a claimed bdp epsilon of combinations x share.
//
// Against exact the answer is the true count, and the same rule (0 means
// absent) holds. Against laplace an answer is an integer noisy count clamped
// at 0: at an epsilon of 1e-10 it is 0 about half the time whatever the
// truth, and the classification is a coin flip.
var BDPExistence = &Attack{
	Name:    "bdp-existence",
	Against: "bdp",
	Source:  "Protivash et al. 4, Lemma 4.5",
	Summary: "which combinations of column values exist in the table, one plain count each, at almost no claimed epsilon",
	Script:  existenceScript,
	Run:     runExistence,
	Score:   scoreExistence,
	Flags:   thresholdFlags,
	Demo: func() Options {
		// 8 x 5 x 12 = 480 combinations; 432 occur in the 20,000-row demo
		// table (gen people --rows 20000, seed 1).
		var domains []Domain
		for _, d := range PeopleDomains() {
			if d.Column == "education" || d.Column == "marital" || d.Column == "occupation" {
				domains = append(domains, d)
			}
		}
		return Options{Target: Target{Table: "people"}, Domains: domains}
	},
}

func init() { register(BDPExistence) }

// MaxExistenceCombinations bounds the queries of one bdp-existence run.
const MaxExistenceCombinations = 10_000

// combinations checks the domains and counts their product.
func combinations(o Options) (int, error) {
	if len(o.Domains) == 0 {
		return 0, errors.New("bdp-existence needs the public domains of the columns to combine (--domain col=lo..hi or col=a,b,c, repeated)")
	}
	if !IsIdentifier(o.Target.Table) {
		return 0, fmt.Errorf("table %q is not a plain SQL identifier", o.Target.Table)
	}
	total := 1
	for _, d := range o.Domains {
		if d.Column == "" || d.Size() < 1 {
			return 0, fmt.Errorf("domain of %q: a column name and at least one value are needed", d.Column)
		}
		if d.Size() > MaxExistenceCombinations || total*int(d.Size()) > MaxExistenceCombinations {
			return 0, fmt.Errorf("the domains have more than %d combinations: narrow them", MaxExistenceCombinations)
		}
		total *= int(d.Size())
	}
	return total, nil
}

// combination is the i-th combination of the domains' values (the last
// domain varies fastest), as value indexes.
func combination(o Options, i int) []int64 {
	idx := make([]int64, len(o.Domains))
	for j := len(o.Domains) - 1; j >= 0; j-- {
		size := int(o.Domains[j].Size())
		idx[j] = int64(i % size)
		i /= size
	}
	return idx
}

// combinationWhere is "col1 = a AND col2 = b ..." for a combination.
func combinationWhere(o Options, idx []int64) string {
	parts := make([]string, len(idx))
	for j, i := range idx {
		parts[j] = pglex.QuoteIdent(o.Domains[j].Column) + " = " + o.Domains[j].Literal(i)
	}
	return strings.Join(parts, " AND ")
}

// combinationValues is a combination's values as text.
func combinationValues(o Options, idx []int64) []string {
	out := make([]string, len(idx))
	for j, i := range idx {
		out[j] = literalText(o.Domains[j].Literal(i))
	}
	return out
}

func existenceSQL(o Options, idx []int64) string {
	return Target{Table: o.Target.Table, Where: andWhere(o.Target.Where, combinationWhere(o, idx))}.querySQL()
}

func existenceScript(o Options) []string {
	total, err := combinations(o)
	if err != nil {
		return nil
	}
	var out []string
	if s := shareStatement(o.Threshold.Epsilon); s != "" {
		out = append(out, s)
	}
	for i := range total {
		out = append(out, existenceSQL(o, combination(o, i)))
	}
	return out
}

func runExistence(ctx context.Context, q Querier, o Options) (*Result, error) {
	total, err := combinations(o)
	if err != nil {
		return nil, err
	}
	share, shareNote, err := askShare(ctx, q, o.Threshold.Epsilon)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	existing := [][]string{}
	classified, fractional := 0, 0
	// Each combination's statement is fixed in advance: they are sent
	// o.Pipeline at a time.
	var failed error
	inBatches(ctx, q, o.Pipeline, total, func(i int) string { return existenceSQL(o, combination(o, i)) },
		func(i int, rows *Rows, err error) bool {
			v, err := countOf(rows, err)
			if err != nil {
				if Stopped(err) {
					res.Note = fmt.Sprintf("stopped after %d of %d combinations: %v", classified, total, err)
				} else {
					failed = err
				}
				return false
			}
			classified++
			if v != math.Trunc(v) {
				fractional++
			}
			if v != 0 {
				existing = append(existing, combinationValues(o, combination(o, i)))
			}
			if o.Progress != nil {
				o.Progress(classified, total)
			}
			return true
		})
	if failed != nil {
		return nil, failed
	}
	columns := make([]string, len(o.Domains))
	for j, d := range o.Domains {
		columns[j] = d.Column
	}
	res.Recovered = int64(len(existing))
	res.Estimate = float64(len(existing))
	res.Details = map[string]any{
		"columns": columns, "combinations": total, "classified": classified, "existing": existing,
		"absent": classified - len(existing), "fractional_answers": fractional, "epsilon_share": share,
	}
	found := fmt.Sprintf("%d of %d combinations of %s exist (answered other than 0); %d answers had a fractional part, certainly noise",
		len(existing), classified, strings.Join(columns, ", "), fractional)
	for _, n := range []string{res.Note, shareNote} {
		if n != "" {
			found = n + "; " + found
		}
	}
	res.Note = found
	return res, nil
}

// scoreExistence reads the combinations that truly occur and scores the
// fraction of all combinations classified right; combinations left
// unclassified (the firewall stopped the run) count as wrong.
func scoreExistence(ctx context.Context, path string, o Options, r *Result) error {
	total, err := combinations(o)
	if err != nil {
		return err
	}
	// The combinations that occur among the target's rows, keyed by their
	// values as text joined with NUL.
	columns := make([]string, len(o.Domains))
	for j, d := range o.Domains {
		columns[j] = d.Column
	}
	truth, err := TrueRows(ctx, path, o.Target, columns)
	if err != nil {
		return err
	}
	found := map[string]bool{}
	if ex, ok := r.Details["existing"].([][]string); ok {
		for _, vals := range ex {
			found[reconRowKey(vals)] = true
		}
	}
	classified, _ := r.Details["classified"].(int)
	right, falsePresent, falseAbsent := 0, 0, 0
	exists := int64(0)
	for i := range total {
		key := reconRowKey(combinationValues(o, combination(o, i)))
		present := truth[key] > 0
		if present {
			exists++
		}
		switch {
		case i >= classified:
		case found[key] == present:
			right++
		case found[key]:
			falsePresent++
		default:
			falseAbsent++
		}
	}
	r.CellsTotal, r.CellsExact, r.Unit = total, &right, "combinations classified right"
	success := float64(right) / float64(total)
	r.Success = &success
	exact := right == total
	r.Truth, r.Exact = &exists, &exact
	r.Details["false_present"] = falsePresent
	r.Details["false_absent"] = falseAbsent
	return nil
}

package mechanisms

import (
	"context"

	"countwall/ir"
	"countwall/pgerror"
)

func init() { Register("bdp", newBDP) }

// bdp is the bootstrap Laplace mechanism of bootstrap differential privacy
// (O'Keefe and Charest 2019): the answer plus Laplace noise of scale
// bootstrap sensitivity / epsilon*. Bootstrap neighbours may only contain
// records of the true dataset, so the sensitivity depends on the data
// (Protivash et al. Lemma 4.5), and whether noise was added reveals which
// records exist. Like idp it is here to be attacked; its claim is BDP's.
//
// Sensitivity, with c the cell's count and n the table size:
//   - plain COUNT: 0 when every record satisfies the predicate or none does
//     (c == n or c == 0), else 1;
//   - threshold `COUNT(*) > b`: the 0/1 answer can change only when some
//     records satisfy the predicate and some do not and 0 <= b < n: then 1,
//     else 0 and the exact answer is published;
//   - GROUP BY histogram: the records fall into the cells and the rest (n
//     minus the cells' total); replacing one record by a copy of another
//     moves one unit between two of these classes, so the L1 sensitivity is
//     2 when at least two classes are non-empty and 0 otherwise. A threshold
//     GROUP BY thresholds the noisy counts.
//
// Every answer is a float, exact answers included.
type bdp struct {
	noise NoiseSource
}

func newBDP(p Params, env Env) (Mechanism, error) {
	if err := decodeParams(p, &struct{}{}); err != nil {
		return nil, err
	}
	return &bdp{noise: noiseFor(env)}, nil
}

func (*bdp) Name() string { return "bdp" }

func (*bdp) Needs() ir.Needs { return ir.Needs{TableSize: true} }

// FloatOutput tells the engine that the answer column is float8.
func (*bdp) FloatOutput() bool { return true }

// Accounting is the kind of budget the mechanism charges.
func (*bdp) Accounting() Accounting { return AccountingBDP }

func (*bdp) Describe() string {
	return "bdp: bootstrap Laplace: noise scale = bootstrap sensitivity / epsilon*, exact answers when that is 0; " +
		"claims epsilon*-bootstrap differential privacy per query, which is not differential privacy: " +
		"the presence of noise reveals which records exist"
}

// bdpCountSensitivity is Lemma 4.5 for a count of c records out of n.
func bdpCountSensitivity(c, n int64) float64 {
	if c <= 0 || c >= n {
		return 0
	}
	return 1
}

// bdpHistogramSensitivity is the L1 bootstrap sensitivity of a histogram.
func bdpHistogramSensitivity(cells []ir.Cell, n int64) float64 {
	nonEmpty, total := 0, int64(0)
	for _, c := range cells {
		if c.InDomain && c.Count > 0 {
			nonEmpty++
		}
		total += c.Count
	}
	if n-total > 0 {
		nonEmpty++
	}
	if nonEmpty >= 2 {
		return 2
	}
	return 0
}

// bdpSensitivity is Lemma 4.5's rule. The 0/1 answer of a threshold can
// change only when 0 <= b < n (and some records satisfy the predicate and
// some do not).
var bdpSensitivity = localSensitivity{
	histogram: bdpHistogramSensitivity,
	threshold: func(c, n, b int64) float64 {
		if b >= 0 && b < n {
			return bdpCountSensitivity(c, n)
		}
		return 0
	},
	count: bdpCountSensitivity,
	max:   2,
}

// Price refuses what bdp cannot answer and charges epsilon*, before the
// data is read.
func (m *bdp) Price(req *Request) (Charge, error) {
	return priceLocal(req, m.Name(), AccountingBDP, bdpSensitivity)
}

// CheckShare refuses an epsilon the noise cannot use.
func (m *bdp) CheckShare(epsilon, _ float64) error { return checkLocalShare(epsilon, bdpSensitivity) }

func (m *bdp) Answer(_ context.Context, req *Request) ([]Answer, Charge, error) {
	return answerLocal(req, m.Name(), AccountingBDP, m.noise, bdpSensitivity)
}

// refuseSums: bdp's bootstrap sensitivity is derived for counts
// (Protivash et al. Lemma 4.5); the papers give none for a sum, and one
// made up here would claim what they do not.
func (*bdp) refuseSums() error {
	return pgerror.Errorf(pgerror.FeatureNotSupported, "bdp does not answer SUM or AVG: its bootstrap sensitivity is derived for counts only (Protivash et al. Lemma 4.5), and the papers give none for sums").
		WithHint("Ask COUNT(*) under bdp, or SUM and AVG under laplace or gaussian, which bound each person's contribution.")
}

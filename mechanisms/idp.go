package mechanisms

import (
	"context"
	"fmt"

	"countwall/ir"
	"countwall/pgerror"
)

func init() { Register("idp", newIDP) }

// idpMaxK keeps 2k (the histogram sensitivity) and k + c far from overflow.
const idpMaxK = 1 << 40

// idp is the k-local Laplace mechanism of Group IDP (Soria-Comas et al.
// 2017) as Protivash et al. analyse it: the answer plus Laplace noise of
// scale k-local sensitivity / epsilon*, where epsilon* is the analyst's
// per-query share. The sensitivity depends on the data (Lemma 3.3), so
// whether noise was added at all leaks: this mechanism is here to be
// attacked, and its claim is IDP's, not DP's.
//
// Sensitivity, with c the cell's count and n the table size:
//   - threshold `COUNT(*) > b`: 1 when max(c-k, 0) <= b < min(c+k, n), else 0
//     (then the exact 0 or 1 is published);
//   - plain COUNT: min(k, max(c, n-c));
//   - GROUP BY histogram: 2k (L1) for every cell; a threshold GROUP BY
//     thresholds the noisy counts.
//
// plus_one adds 1 to the sensitivity so that noise is always added
// (Protivash et al. 5.1, which shows a variance test still tells 0 from 1).
//
// Every answer is a float, exact answers included (they have no fractional
// part), so the column type does not depend on the data.
type idp struct {
	k       int64
	plusOne bool
	noise   NoiseSource
}

func newIDP(p Params, env Env) (Mechanism, error) {
	params := struct {
		K       int64 `mapstructure:"k"`
		PlusOne bool  `mapstructure:"plus_one"`
	}{K: 1}
	if err := decodeParams(p, &params); err != nil {
		return nil, err
	}
	if err := intParamIn("k", params.K, 1, idpMaxK); err != nil {
		return nil, err
	}
	return &idp{k: params.K, plusOne: params.PlusOne, noise: noiseFor(env)}, nil
}

func (*idp) Name() string { return "idp" }

func (*idp) Needs() ir.Needs { return ir.Needs{TableSize: true} }

// FloatOutput tells the engine that the answer column is float8.
func (*idp) FloatOutput() bool { return true }

// Accounting is the kind of budget the mechanism charges.
func (*idp) Accounting() Accounting { return AccountingIDP }

func (m *idp) Describe() string {
	extra := ""
	if m.plusOne {
		extra = " plus 1"
	}
	return fmt.Sprintf("idp: Group IDP k-local Laplace (k = %d): noise scale = k-local sensitivity%s / epsilon*, "+
		"exact answers when that is 0; claims (epsilon*, k)-individual differential privacy per query, "+
		"which is not differential privacy: the presence of noise reveals the data", m.k, extra)
}

// idpThresholdSensitivity is Lemma 3.3 for `COUNT(*) > b`.
func idpThresholdSensitivity(c, n, b, k int64) float64 {
	if max(c-k, 0) <= b && b < min(c+k, n) {
		return 1
	}
	return 0
}

// idpCountSensitivity is the k-local sensitivity of a plain count.
func idpCountSensitivity(c, n, k int64) float64 {
	return float64(min(k, max(c, n-c)))
}

// sensitivity is Lemma 3.3's rule, plus 1 with plus_one.
func (m *idp) sensitivity() localSensitivity {
	extra := 0.0
	if m.plusOne {
		extra = 1
	}
	return localSensitivity{
		histogram: func([]ir.Cell, int64) float64 { return float64(2*m.k) + extra },
		threshold: func(c, n, b int64) float64 { return idpThresholdSensitivity(c, n, b, m.k) + extra },
		count:     func(c, n int64) float64 { return idpCountSensitivity(c, n, m.k) + extra },
		max:       float64(2*m.k) + extra,
	}
}

// Price refuses what idp cannot answer and charges epsilon*, before the
// data is read.
func (m *idp) Price(req *Request) (Charge, error) {
	return priceLocal(req, m.Name(), AccountingIDP, m.sensitivity())
}

// CheckShare refuses an epsilon the noise cannot use.
func (m *idp) CheckShare(epsilon, _ float64) error { return checkLocalShare(epsilon, m.sensitivity()) }

func (m *idp) Answer(_ context.Context, req *Request) ([]Answer, Charge, error) {
	return answerLocal(req, m.Name(), AccountingIDP, m.noise, m.sensitivity())
}

// refuseSums: the k-local sensitivity idp noises by is derived for counts
// (Protivash et al. Lemma 3.3); the papers give none for a sum, and one
// made up here would claim what they do not.
func (*idp) refuseSums() error {
	return pgerror.Errorf(pgerror.FeatureNotSupported, "idp does not answer SUM or AVG: its k-local sensitivity is derived for counts only (Protivash et al. Lemma 3.3), and the papers give none for sums").
		WithHint("Ask COUNT(*) under idp, or SUM and AVG under laplace or gaussian, which bound each person's contribution.")
}

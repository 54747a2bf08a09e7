package mechanisms

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"countwall/ir"
)

func init() { Register("layered", newLayered) }

// Defaults follow pg_diffix: noise SD 1 per layer; the low-count threshold
// is 3 + 2*1*sqrt(2) plus N(0, 1) noise.
const (
	layeredDefaultSD      = 1.0
	layeredDefaultLCMin   = 3.0
	layeredDefaultLCGap   = 2.0
	layeredDefaultLCSD    = 1.0
	layeredMaxParam       = 1e6
	layeredLabelCondition = "condition"
	layeredLabelGroup     = "group"
	layeredLabelKey       = "contributors"
	layeredLabelThreshold = "low-count threshold"
)

// layered is Diffix-style sticky noise (Francis et al.; pg_diffix). Each
// cell's answer is its count plus the sum of Gaussian layers:
//   - one per normalised WHERE condition, seeded by the condition's text, so
//     the same condition always contributes the same noise;
//   - one per GROUP BY column, seeded by the column and the cell's value
//     (the group value is an implicit condition of the cell);
//   - one seeded by the contributor key, so the same set of people always
//     gets the same noise and different sets get independent noise.
//
// Every seed is an HMAC of the firewall secret, so analysts cannot compute
// the layers. Answers are rounded to integers and never negative. A cell with
// fewer distinct units than a noisy threshold (mean 3 + 2*sqrt(2), SD 1,
// seeded by the contributor key) is withheld: dropped from a GROUP BY over
// undeclared domains, published as a suppressed 0 otherwise. Asking again
// returns the same answer, so averaging repeated queries gains nothing;
// averaging different queries for the same people does (split averaging).
// It claims no formal guarantee and charges no budget.
type layered struct {
	secret []byte
	sd     float64 // noise SD per layer
	lcMin  float64 // low-count threshold floor
	lcGap  float64 // mean gap above the floor, in units of lcSD*sqrt(2)
	lcSD   float64 // SD of the threshold noise
}

func newLayered(p Params, env Env) (Mechanism, error) {
	params := struct {
		SD    float64 `mapstructure:"noise_layer_sd"`
		LCMin float64 `mapstructure:"low_count_min_threshold"`
		LCGap float64 `mapstructure:"low_count_mean_gap"`
		LCSD  float64 `mapstructure:"low_count_layer_sd"`
	}{SD: layeredDefaultSD, LCMin: layeredDefaultLCMin, LCGap: layeredDefaultLCGap, LCSD: layeredDefaultLCSD}
	if err := decodeParams(p, &params); err != nil {
		return nil, err
	}
	for key, f := range map[string]float64{"noise_layer_sd": params.SD, "low_count_min_threshold": params.LCMin,
		"low_count_mean_gap": params.LCGap, "low_count_layer_sd": params.LCSD} {
		if err := floatParamIn(key, f, 0, layeredMaxParam); err != nil {
			return nil, err
		}
	}
	m := &layered{sd: params.SD, lcMin: params.LCMin, lcGap: params.LCGap, lcSD: params.LCSD}
	switch {
	case len(env.Secret) > 0:
		m.secret = append([]byte(nil), env.Secret...)
	case env.Seed != 0:
		// Tests without a state database: a secret derived from the seed.
		s := sha256.Sum256([]byte("countwall layered test secret " + strconv.FormatInt(env.Seed, 10)))
		m.secret = s[:]
	default:
		return nil, errors.New("the layered mechanism needs the firewall secret to seed its noise")
	}
	return m, nil
}

func (*layered) Name() string { return "layered" }

func (*layered) Needs() ir.Needs {
	return ir.Needs{Key: true, Conditions: true, Units: true, Contributions: true}
}

// DropsLowCounts is true: the noisy low-count filter drops groups whose
// domain is not declared.
func (*layered) DropsLowCounts() bool { return true }

func (m *layered) Describe() string {
	return fmt.Sprintf("layered: Diffix-style sticky noise, one Gaussian layer (SD %g) per condition and one per set of contributors; "+
		"cells with fewer than about %.1f people withheld; the same question always gets the same answer; "+
		"offers no formal privacy guarantee", m.sd, m.lcMin+m.lcGap*m.lcSD*math.Sqrt2)
}

// noiseLayer is one named layer of a cell's noise.
type noiseLayer struct {
	label string
	value float64
}

// layers returns a cell's noise layers, in a fixed order: conditions,
// group values, then the contributor key.
func (m *layered) layers(conditions []string, groupBy []string, group []ir.GroupValue, key uint32) []noiseLayer {
	out := make([]noiseLayer, 0, len(conditions)+len(group)+1)
	for _, c := range conditions {
		label := layeredLabelCondition + "\x00" + c
		out = append(out, noiseLayer{label, m.sd * m.normal(label)})
	}
	for i, g := range group {
		col := ""
		if i < len(groupBy) {
			col = groupBy[i]
		}
		label := layeredLabelGroup + "\x00" + col + "\x00" + strconv.FormatBool(g.Null) + "\x00" + g.Text
		out = append(out, noiseLayer{label, m.sd * m.normal(label)})
	}
	label := layeredLabelKey + "\x00" + strconv.FormatUint(uint64(key), 10)
	return append(out, noiseLayer{label, m.sd * m.normal(label)})
}

// threshold is the cell's noisy low-count threshold.
func (m *layered) threshold(key uint32) float64 {
	z := m.normal(layeredLabelThreshold + "\x00" + strconv.FormatUint(uint64(key), 10))
	return m.lcMin + m.lcGap*m.lcSD*math.Sqrt2 + m.lcSD*z
}

// withholds reports whether the threshold can withhold a count: not when
// it is 0 for every key (no minimum, no spread).
func (m *layered) withholds() bool { return m.lcMin > 0 || m.lcSD > 0 }

// normal is a standard normal value determined by the secret and label:
// Box-Muller on two 53-bit uniforms from HMAC-SHA256(secret, label). It is
// written out rather than drawn from math/rand so that the noise stays the
// same across Go releases (and so across upgrades of the firewall).
func (m *layered) normal(label string) float64 {
	h := hmac.New(sha256.New, m.secret)
	h.Write([]byte("countwall layered noise\x00"))
	h.Write([]byte(label))
	sum := h.Sum(nil)
	const scale = 1.0 / (1 << 53)
	u1 := (float64(binary.LittleEndian.Uint64(sum[0:8])>>11) + 0.5) * scale // (0, 1)
	u2 := float64(binary.LittleEndian.Uint64(sum[8:16])>>11) * scale
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

func (m *layered) Answer(_ context.Context, req *Request) ([]Answer, Charge, error) {
	cells, err := requestCells(req)
	if err != nil {
		return nil, Charge{}, err
	}
	q := req.Query
	drop := len(q.GroupBy) > 0 && !req.Result.DomainComplete
	answers := make([]Answer, len(cells))
	for i, c := range cells {
		switch {
		case req.Result.DomainComplete && !c.InDomain:
			answers[i] = Answer{Dropped: true}
		case float64(c.Units) < m.threshold(c.Key):
			if drop {
				answers[i] = Answer{Dropped: true}
			} else {
				answers[i] = Answer{Suppressed: true}
			}
		default:
			noisy := float64(c.Count)
			for _, l := range m.layers(req.Result.Conditions, q.GroupBy, c.Group, c.Key) {
				noisy += l.value
			}
			answers[i] = Answer{Int: roundCount(noisy)}
			if m.withholds() {
				answers[i] = withheldIfZero(answers[i].Int)
			}
		}
	}
	if q.HasSums() {
		return m.answerSums(req, cells, answers), Charge{}, nil
	}
	return thresholdAnswers(q, answers), Charge{}, nil
}

// roundCount rounds a noisy count to a non-negative int64, saturating.
func roundCount(x float64) int64 {
	r := math.Round(x)
	switch {
	case !(r > 0): // negative, zero or NaN
		return 0
	case r >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(r)
}

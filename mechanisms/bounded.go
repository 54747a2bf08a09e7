package mechanisms

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"countwall/ir"
)

func init() { Register("bounded", newBounded) }

const (
	boundedDefaultRange = 2
	// boundedMaxRange keeps count+noise far from int64 overflow and the noise
	// meaningful for counts; a wider range is not a bounded-noise regime.
	boundedMaxRange = 1 << 30
)

// bounded adds fresh uniform integer noise on [-r, r] to every answer, with
// optional suppression (the Bounded Noisy Counts algorithm of Asghar-Kaafar
// section 3, without its noise dictionary: noise is drawn anew on every
// query, so the same cell asked twice gets two independent answers and
// averaging repeated queries recovers the true count).
//
// Answers are clamped at 0: a count is never published negative. True zero
// cells are noised like any other count (then clamped), so a published 0
// does not certify that a cell is empty.
type bounded struct {
	r          int64
	suppressAt int64 // counts <= suppressAt answer 0; -1 turns suppression off
	publish    bool
	rng        *uniformIntSource
}

func newBounded(p Params, env Env) (Mechanism, error) {
	params := struct {
		Range      int64 `mapstructure:"range"`
		SuppressAt int64 `mapstructure:"suppress_at"`
		Publish    bool  `mapstructure:"publish_parameters"`
	}{Range: boundedDefaultRange, SuppressAt: -1}
	if err := decodeParams(p, &params); err != nil {
		return nil, err
	}
	if err := intParamIn("range", params.Range, 0, boundedMaxRange); err != nil {
		return nil, err
	}
	if err := intParamIn("suppress_at", params.SuppressAt, -1, math.MaxInt64); err != nil {
		return nil, err
	}
	rng, err := newUniformIntSource(env.Seed, "bounded")
	if err != nil {
		return nil, err
	}
	return &bounded{r: params.Range, suppressAt: params.SuppressAt, publish: params.Publish, rng: rng}, nil
}

func (*bounded) Name() string { return "bounded" }

// Needs asks, for a query with sums, for the sums of clamped values.
func (*bounded) Needs() ir.Needs { return ir.Needs{Clamp: true} }

func (m *bounded) Describe() string {
	claim := "bounded: fresh uniform integer noise on every answer, clamped at 0; " +
		"averaging repeated queries recovers the true count; offers no formal privacy guarantee"
	if !m.publish {
		return claim
	}
	params := fmt.Sprintf(" (range %d", m.r)
	if m.suppressAt >= 0 {
		params += fmt.Sprintf(", counts <= %d published as 0", m.suppressAt)
	}
	return claim + params + ")"
}

func (m *bounded) Answer(_ context.Context, req *Request) ([]Answer, Charge, error) {
	cells, err := requestCells(req)
	if err != nil {
		return nil, Charge{}, err
	}
	answers := make([]Answer, len(cells))
	for i, c := range cells {
		if c.Count <= m.suppressAt {
			answers[i] = Answer{Suppressed: true}
			continue
		}
		answers[i] = Answer{Int: addNoiseClampedAtZero(c.Count, m.rng.intIn(-m.r, m.r))}
		if m.suppressAt >= 0 {
			answers[i] = withheldIfZero(answers[i].Int)
		}
	}
	if req.Query.HasSums() {
		return m.answerSums(req, cells, answers), Charge{}, nil
	}
	return thresholdAnswers(req.Query, answers), Charge{}, nil
}

// addNoiseClampedAtZero returns count+noise, never below 0 and saturating at
// the top of int64 rather than wrapping.
func addNoiseClampedAtZero(count, noise int64) int64 {
	if noise > 0 && count > math.MaxInt64-noise {
		return math.MaxInt64
	}
	return max(count+noise, 0)
}

// uniformIntSource draws uniform integers for mechanisms whose noise is fresh
// on every query. It is a ChaCha8 stream (a cryptographically strong
// generator) keyed from crypto/rand, so analysts cannot predict it; with a
// non-zero seed it is keyed from the seed instead, for reproducible tests.
// It is safe for concurrent use.
type uniformIntSource struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// newUniformIntSource keys a source from seed (when non-zero) or from the
// system's secure random source. purpose separates the streams of different
// mechanisms built from the same seed.
func newUniformIntSource(seed int64, purpose string) (*uniformIntSource, error) {
	var key [32]byte
	if seed != 0 {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(seed))
		key = sha256.Sum256(append([]byte("countwall uniform noise "+purpose+"\x00"), b[:]...))
	} else if _, err := crand.Read(key[:]); err != nil {
		return nil, fmt.Errorf("seeding the %s noise generator: %w", purpose, err)
	}
	return &uniformIntSource{rng: rand.New(rand.NewChaCha8(key))}, nil
}

// intIn returns a uniform integer in [lo, hi]; it requires lo <= hi and a
// span that fits in int64.
func (s *uniformIntSource) intIn(lo, hi int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return lo + s.rng.Int64N(hi-lo+1)
}

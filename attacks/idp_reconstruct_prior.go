package attacks

import (
	"fmt"
	"slices"
	"sync"
)

// How a split chooses where to cut a range of a column's values. The
// paper's Algorithm 2 halves the range's values. Real columns are far from
// uniform (Adult's capital_gain is 0 for 92% of the people, over a domain
// of 100,000 values), so a search that halves values asks a dozen
// questions to reach a value most rows share. The weighted search cuts
// where half the rows it expects lie instead, expecting each value's share
// of the rows found in the column so far: a row whose value is common is
// then found in a question or two, one whose value was never seen yet in
// about as many as halving asks. Every cut is still a prefix and a suffix
// of the range it splits, so the counts found are the same exact counts;
// only which questions are asked changes.
//
// So that a run asks the same questions whatever the timing of its
// connections, the groups of a column are split in batches in their order
// (searchBatch groups, then twice as many each time), each batch with what
// the batches before it found: the first batch of every column halves.

const (
	SearchHalving  = "halving"  // the paper's: a range is cut at half its values
	SearchWeighted = "weighted" // at half the rows the column's values found so far expect
)

// searchBatch is the groups split before a column's first weighting: as
// many as the default connections and pipeline keep in flight (32 x 16).
const searchBatch = 512

// checkSearch refuses an unknown --search.
func checkSearch(s string) error {
	switch s {
	case "", SearchHalving, SearchWeighted:
		return nil
	}
	return fmt.Errorf("--search %q: want %s or %s", s, SearchWeighted, SearchHalving)
}

// valuePrior is the rows each value of a column held in the groups split
// so far, as running sums over the values found, in value order.
type valuePrior struct {
	values []int64 // value indexes found, ascending
	before []int64 // before[i]: rows of values[:i]; one more entry than values
	size   int64   // the domain's values
}

// newValuePrior sums found, the rows each value index held.
func newValuePrior(found map[int64]int64, size int64) *valuePrior {
	p := &valuePrior{size: size, before: []int64{0}}
	for v := range found {
		p.values = append(p.values, v)
	}
	slices.Sort(p.values)
	for _, v := range p.values {
		p.before = append(p.before, p.before[len(p.before)-1]+found[v])
	}
	return p
}

// weight is the rows expected in [i, j): those found there, and every
// value a 1/size share of one row, so that no value is ruled out.
func (p *valuePrior) weight(i, j int64) float64 {
	a, _ := slices.BinarySearch(p.values, i)
	b, _ := slices.BinarySearch(p.values, j)
	// The conversion rounds the product on its own, so that no platform
	// fuses it with the sum and cuts elsewhere.
	spread := float64(float64(j-i) / float64(p.size))
	return float64(p.before[b]-p.before[a]) + spread
}

// cut is where a split of [i, j) (j-i at least 2) cuts it: at half its
// values without a prior or rows found, else at the first value where the
// rows expected below reach half the range's.
func (p *valuePrior) cut(i, j int64) int64 {
	if p == nil || len(p.values) == 0 {
		return i + (j-i)/2
	}
	half := p.weight(i, j) / 2
	lo, hi := i+1, j-1
	for lo < hi {
		m := lo + (hi-lo)/2
		if p.weight(i, m) >= half {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// searchBatches hand out a column's groups in batches, under the lock of
// the splitGroups that made them: end is past the last group of the batch
// in flight, prior what the batches before it found (nil: halve).
type searchBatches struct {
	mu         *sync.Mutex
	cond       *sync.Cond
	start, end int
	total      int
	size       int64
	found      map[int64]int64
	prior      *valuePrior
}

// newSearchBatches batches groups of a column of domain d, under mu: one
// batch of them all unless the run's search is weighted.
func (r *reconstruction) newSearchBatches(d Domain, groups int, mu *sync.Mutex) *searchBatches {
	b := &searchBatches{mu: mu, cond: sync.NewCond(mu), end: groups, total: groups, size: d.Size()}
	if r.search() == SearchWeighted {
		b.end, b.found = min(groups, searchBatch), map[int64]int64{}
	}
	return b
}

// search is the run's --search, weighted unless halving was asked for.
func (r *reconstruction) search() string {
	if p, _ := r.o.Params.(*ReconstructParams); p != nil && p.Search == SearchHalving {
		return SearchHalving
	}
	return SearchWeighted
}

// await waits, with mu held, while blocked says the batch's last groups
// are still being split. It waits out of step (its search's lockstep, if
// any), so that the other searches' statements go without it.
func (b *searchBatches) await(step *lockstep, blocked func() bool) {
	if step != nil {
		b.mu.Unlock()
		step.leave()
		b.mu.Lock()
	}
	for blocked() {
		b.cond.Wait()
	}
	if step != nil {
		b.mu.Unlock()
		step.join()
		b.mu.Lock()
	}
}

// next, with mu held once every group of the batch is split (into parts),
// adds the values they found to the prior and opens the next batch, as
// large as all before it.
func (b *searchBatches) next(parts [][]recGroup) {
	if b.end == b.total {
		return
	}
	for _, ps := range parts[b.start:b.end] {
		for _, p := range ps {
			b.found[p.vals[0]] += p.count
		}
	}
	b.prior = newValuePrior(b.found, b.size)
	b.start, b.end = b.end, min(b.total, 2*b.end)
	b.cond.Broadcast()
}

// wake lets every search waiting for the batch look again (a search
// failed, and no more groups are to be taken).
func (b *searchBatches) wake() { b.cond.Broadcast() }

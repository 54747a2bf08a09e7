package mechanisms

import (
	"fmt"
	"strings"

	"github.com/google/differential-privacy/go/v3/dpagg"

	"countwall/ir"
	"countwall/pgerror"
)

// Partition selection: how laplace and gaussian answer a GROUP BY over
// columns without a declared public domain.
//
// Which groups exist is itself data: a group that only one person is in
// would appear in the answer because of them, whatever noise its count
// carries. So each group found is released only if Google's library keeps
// it (dpagg.PreAggSelectPartition, "Differentially private partition
// selection", Desfontaines, Voss, Gipson and Mandayam, PoPETs 2022), from
// the number of distinct privacy units counted in it after each unit was
// bounded to G = max_groups_per_unit groups by the keyed hash. With l0 = G
// the selection is (epsilon_s, delta_s)-DP for the set of groups released:
// a group that exists for one person appears with probability at most
// delta_s/G (G <= 3) or delta_s/2 (G > 3, the library's Gaussian
// thresholding), and a group with enough units is kept with certainty.
//
// The query's share (epsilon, delta) is split, as Privacy on Beam splits it
// when partitions are not public: the selection gets epsilon_share of
// epsilon and delta_share of delta, the counts the rest. Under laplace the
// counts use no delta, so delta_share defaults to 1; under gaussian the
// counts' sigma needs some, so it defaults to 0.5. By basic composition the
// query is then (epsilon, delta_share*delta)-DP under laplace, and is
// charged exactly that; under gaussian the counts are charged their zCDP
// rho and the selection its (epsilon_s, delta_s) as a pure charge, which
// the ledger adds to the converted rho (see ledger.foldRho).

// PartitionSelector decides whether a group is released. Implementations
// are safe for concurrent use.
type PartitionSelector interface {
	// Keep reports whether a group holding units distinct privacy units,
	// each unit counted in at most l0 groups, is released, by an
	// (epsilon, delta)-DP decision.
	Keep(units, l0 int64, epsilon, delta float64) (bool, error)
}

// LibrarySelection is the production selector: the library's
// PreAggSelectPartition, one per group. Its randomness comes from the
// library's own source (crypto/rand), which cannot be seeded; tests of the
// selection are statistical.
func LibrarySelection() PartitionSelector { return librarySelection{} }

type librarySelection struct{}

func (librarySelection) Keep(units, l0 int64, epsilon, delta float64) (bool, error) {
	s, err := dpagg.NewPreAggSelectPartition(&dpagg.PreAggSelectPartitionOptions{
		Epsilon: epsilon, Delta: delta, MaxPartitionsContributed: l0})
	if err != nil {
		return false, err
	}
	if err := s.IncrementBy(units); err != nil {
		return false, err
	}
	return s.ShouldKeepPartition()
}

// SelectionHardThreshold is the number of distinct units from which a group
// is always released (the library's GetHardThreshold; for G > 3, where the
// library thresholds a Gaussian count instead, 0: no hard threshold).
func SelectionHardThreshold(l0 int64, epsilon, delta float64) (int, error) {
	if l0 > 3 {
		return 0, nil
	}
	s, err := dpagg.NewPreAggSelectPartition(&dpagg.PreAggSelectPartitionOptions{
		Epsilon: epsilon, Delta: delta, MaxPartitionsContributed: l0})
	if err != nil {
		return 0, err
	}
	return s.GetHardThreshold()
}

// partitionSelection is the configuration of laplace's and gaussian's
// selection.
type partitionSelection struct {
	enabled      bool
	epsilonShare float64
	deltaShare   float64
	selector     PartitionSelector
}

// partitionParams are the parameters under mechanism.params.partition_selection.
type partitionParams struct {
	Enabled      *bool    `mapstructure:"enabled"`
	EpsilonShare *float64 `mapstructure:"epsilon_share"`
	DeltaShare   *float64 `mapstructure:"delta_share"`
}

// newPartitionSelection reads the parameters over the defaults: enabled,
// half the epsilon, and defaultDeltaShare of the delta.
func newPartitionSelection(p *partitionParams, defaultDeltaShare float64) (partitionSelection, error) {
	s := partitionSelection{enabled: true, epsilonShare: 0.5, deltaShare: defaultDeltaShare, selector: LibrarySelection()}
	if p == nil {
		return s, nil
	}
	if p.Enabled != nil {
		s.enabled = *p.Enabled
	}
	maxDelta := 1.0
	if defaultDeltaShare < 1 { // the counts need delta too
		maxDelta = 0.99
	}
	for _, share := range []struct {
		key      string
		given    *float64
		dst      *float64
		min, max float64
	}{
		{"partition_selection.epsilon_share", p.EpsilonShare, &s.epsilonShare, 0.01, 0.99},
		{"partition_selection.delta_share", p.DeltaShare, &s.deltaShare, 0.01, maxDelta},
	} {
		if share.given == nil {
			continue
		}
		if err := floatParamIn(share.key, *share.given, share.min, share.max); err != nil {
			return s, err
		}
		*share.dst = *share.given
	}
	return s, nil
}

// describe states the selection for SHOW mechanism and docs/mechanisms.md.
func (s partitionSelection) describe() string {
	if !s.enabled {
		return "GROUP BY only over declared domains (partition_selection.enabled: false)"
	}
	return fmt.Sprintf("GROUP BY over a column without a declared domain: a group is released only if the library's partition selection "+
		"(dpagg.PreAggSelectPartition, on the distinct units of the group, l0 = G) keeps it, at %g of the query's epsilon and %g of its delta "+
		"(delta > 0 needed); the counts get the rest; groups not released are not shown", s.epsilonShare, s.deltaShare)
}

// undeclaredGroupBy reports whether req groups by a column without a
// declared public domain: from the catalog before the read, else from the
// cells (a GROUP BY the planner could not complete over a domain).
func undeclaredGroupBy(req *Request) bool {
	if len(req.Query.GroupBy) == 0 {
		return false
	}
	if req.Table == nil {
		return req.Result != nil && !req.Result.DomainComplete
	}
	for _, g := range req.Query.GroupBy {
		col, ok := req.Table.Columns[strings.ToLower(g)]
		if !ok || col.Domain == nil {
			return true
		}
	}
	return false
}

// dpPlan is how a request will be answered and what it costs, known before
// the data is read.
type dpPlan struct {
	l0, lInf int64
	// countEpsilon and countDelta are the share the counts' noise uses.
	countEpsilon, countDelta float64
	// selects is set for a GROUP BY over undeclared columns, whose groups
	// are released by partition selection at (selectEpsilon, selectDelta).
	selects                    bool
	selectEpsilon, selectDelta float64
	charge                     Charge
	// sums splits the counts' share between the aggregates of a query
	// with SUM or AVG (dpsums.go); nil for a COUNT query.
	sums *sumPlan
}

// plan splits the request's share between the selection and the counts and
// prices it, refusing what cannot be answered: it is Price for laplace and
// gaussian, and Answer checks its charge against it.
func (m *dpCount) plan(req *Request, bounds ir.Bounds) (dpPlan, error) {
	if req == nil || req.Query == nil {
		return dpPlan{}, pgerror.Errorf(pgerror.InternalError, "mechanism called without a query")
	}
	p := dpPlan{countEpsilon: req.Epsilon, countDelta: req.Delta, selects: undeclaredGroupBy(req)}
	if p.selects && !m.selection.enabled {
		return dpPlan{}, domainRequired(m.name)
	}
	if err := checkShare(req, m.withDelta); err != nil {
		return dpPlan{}, err
	}
	var err error
	if p.l0, p.lInf, err = boundsSensitivity(bounds); err != nil {
		return dpPlan{}, err
	}
	if p.selects {
		if err := m.planSelection(req, &p); err != nil {
			return dpPlan{}, err
		}
	}
	if req.Query.HasSums() {
		sp, err := m.planSums(req, &p)
		if err != nil {
			return dpPlan{}, err
		}
		p.sums = &sp
		p.charge, err = m.sumCharge(req, &p, &sp)
		return p, err
	}
	if p.charge, err = m.cost(req, &p); err != nil {
		return dpPlan{}, err
	}
	return p, nil
}

// planSelection splits the share for a partition selection and checks, on a
// group of one unit and before any row is read, that the library accepts
// the selection's parameters.
func (m *dpCount) planSelection(req *Request, p *dpPlan) error {
	if !(req.Delta > 0) {
		return &pgerror.Error{Code: pgerror.InvalidParameterValue,
			Message: fmt.Sprintf("%s: a GROUP BY over a column without a declared domain needs delta > 0 for its partition selection", m.name),
			Hint:    "Choose a delta > 0 with SET delta, or declare the domain of each GROUP BY column in the table's config."}
	}
	s := m.selection
	p.selectEpsilon, p.selectDelta = s.share(req.Epsilon, req.Delta)
	p.countEpsilon = req.Epsilon - p.selectEpsilon
	p.countDelta = req.Delta - p.selectDelta
	if _, err := s.selector.Keep(1, p.l0, p.selectEpsilon, p.selectDelta); err != nil {
		return &pgerror.Error{Code: pgerror.InvalidParameterValue,
			Message: fmt.Sprintf("%s: partition selection at epsilon %g, delta %g: %v", m.name, p.selectEpsilon, p.selectDelta, err),
			Hint:    "Choose another epsilon or delta with SET."}
	}
	return nil
}

// countShare is req with the counts' share in place of the query's.
func (p *dpPlan) countShare(req *Request) *Request {
	r := *req
	r.Epsilon, r.Delta = p.countEpsilon, p.countDelta
	return &r
}

// keep decides one cell's release: always for a query without selection.
func (m *dpCount) keep(p *dpPlan, c ir.Cell) (bool, error) {
	if !p.selects {
		return true, nil
	}
	if c.Count > 0 && c.Units < 1 {
		return false, pgerror.Errorf(pgerror.InternalError, "%s: the distinct units of each group were not counted for its partition selection", m.name)
	}
	keep, err := m.selection.selector.Keep(c.Units, p.l0, p.selectEpsilon, p.selectDelta)
	if err != nil {
		return false, pgerror.Internal(fmt.Errorf("%s: partition selection: %w", m.name, err))
	}
	return keep, nil
}

// PartitionSelecter is implemented by mechanisms that release the groups
// of a GROUP BY over columns without a declared domain by partition
// selection: such a query needs the distinct units of each group
// (Needs.Units) besides its count.
type PartitionSelecter interface {
	SelectsPartitions() bool
}

// SelectsPartitions reports whether m answers undeclared GROUP BY by
// partition selection.
func SelectsPartitions(m Mechanism) bool {
	s, ok := m.(PartitionSelecter)
	return ok && s.SelectsPartitions()
}

// SelectsPartitions is true unless partition_selection.enabled is false.
func (m *dpCount) SelectsPartitions() bool { return m.selection.enabled }

// DropsLowCounts: with partition selection a GROUP BY without declared
// domains leaves out the groups the selection does not keep, so it may be
// asked; without it such a GROUP BY is refused.
func (m *dpCount) DropsLowCounts() bool { return m.selection.enabled }

// SelectionShare is the part of a query's share (epsilon, delta) that m's
// partition selection uses; ok is false when m selects no partitions.
func SelectionShare(m Mechanism, epsilon, delta float64) (selEpsilon, selDelta float64, ok bool) {
	type sharer interface{ selectionShare() partitionSelection }
	s, yes := m.(sharer)
	if !yes || !SelectsPartitions(m) {
		return 0, 0, false
	}
	selEpsilon, selDelta = s.selectionShare().share(epsilon, delta)
	return selEpsilon, selDelta, true
}

// share is the selection's part of a query's (epsilon, delta).
func (s partitionSelection) share(epsilon, delta float64) (float64, float64) {
	return s.epsilonShare * epsilon, s.deltaShare * delta
}

func (m *dpCount) selectionShare() partitionSelection { return m.selection }

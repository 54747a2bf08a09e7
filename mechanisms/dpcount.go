package mechanisms

import (
	"context"
	"fmt"
	"strings"

	"countwall/ir"
	"countwall/pgerror"
)

// dpCount is what laplace (laplace.go) and gaussian (gaussian.go) share:
// counts bounded per privacy unit by the planner, one noise draw per cell
// calibrated to the bounded sensitivity, integer answers clamped at 0, GROUP
// BY only over declared domains, and the threshold rule.
//
// Sensitivity per person. The planner counts at most C rows of a unit in a
// cell (max_rows_per_unit) and keeps a unit in at most G cells of a query
// (max_groups_per_unit), choosing them by a keyed hash of the unit, never by
// the data; rows without a unit are left out. Adding or removing one unit,
// with all its rows, then changes at most G cells by at most C each: the L1
// sensitivity is G*C and the L2 sensitivity sqrt(G)*C. Google's library takes
// exactly these as l0 = G and lInf = C. COUNT(DISTINCT unit) counts a unit
// once per cell (C = 1). The bounds come from the table's config, overridden
// by the mechanism's own max_rows_per_unit / max_groups_per_unit when set;
// the ones in force are those the planner reports in Result.Bounds (G lowered
// to the number of cells where that is smaller).
//
// Domains. A GROUP BY over columns with declared public domains answers
// every cell of the domain product (Result.DomainComplete). Over a column
// without one, which groups appear would itself disclose data: the groups
// are released by partition selection (partition.go), or, with
// partition_selection.enabled false, the query is refused.
//
// Answers are integers clamped at 0 (post-processing: clamping costs no
// privacy but biases small counts upwards). A threshold query `COUNT(*) > b`
// publishes 1 when the clamped noisy count exceeds b.
type dpCount struct {
	name   string
	noise  NoiseSource
	bounds ir.Bounds // overrides of the table's bounds; zero fields keep the table's
	// withDelta: the counts' noise needs delta > 0 (gaussian).
	withDelta bool
	selection partitionSelection
	// draw adds one cell's noise for sensitivities l0 = G, lInf = C at the
	// share in req.
	draw func(req *Request, count, l0, lInf int64) (int64, error)
	// cost checks the noise parameters of a plan and returns its charge.
	cost func(req *Request, p *dpPlan) (Charge, error)
}

// dpParams are the parameters laplace and gaussian accept: overrides of
// the tables' contribution bounds (0: the table's).
type dpParams struct {
	MaxRowsPerUnit   *int64 `mapstructure:"max_rows_per_unit"`
	MaxGroupsPerUnit *int64 `mapstructure:"max_groups_per_unit"`
	// PartitionSelection configures GROUP BY over undeclared columns.
	PartitionSelection *partitionParams `mapstructure:"partition_selection"`
}

// maxBound keeps G*C far from the noise's limits (maxNoiseScale).
const maxBound = 1 << 20

func newDPCountBase(name string, p Params, env Env, withDelta bool) (dpCount, error) {
	var params dpParams
	if err := decodeParams(p, &params); err != nil {
		return dpCount{}, err
	}
	var bounds ir.Bounds
	for key, bound := range map[string]struct{ given, dst *int64 }{
		"max_rows_per_unit":   {params.MaxRowsPerUnit, &bounds.MaxRowsPerUnit},
		"max_groups_per_unit": {params.MaxGroupsPerUnit, &bounds.MaxGroupsPerUnit},
	} {
		if bound.given == nil {
			continue
		}
		if err := intParamIn(key, *bound.given, 1, maxBound); err != nil {
			return dpCount{}, err
		}
		*bound.dst = *bound.given
	}
	deltaShare := 1.0 // laplace's counts use no delta
	if withDelta {
		deltaShare = 0.5
	}
	selection, err := newPartitionSelection(params.PartitionSelection, deltaShare)
	if err != nil {
		return dpCount{}, err
	}
	return dpCount{name: name, noise: noiseFor(env), bounds: bounds, withDelta: withDelta, selection: selection}, nil
}

func (m *dpCount) Name() string { return m.name }

// Needs asks for counts bounded per unit: the count is all the noise is
// added to.
func (m *dpCount) Needs() ir.Needs { return ir.Needs{Bound: true, Bounds: m.bounds} }

// Accounting is the kind of budget the mechanism charges.
func (*dpCount) Accounting() Accounting { return AccountingDP }

// ContributionBounds are the mechanism's overrides of the tables' bounds.
func (m *dpCount) ContributionBounds() ir.Bounds { return m.bounds }

// sensitivity is (l0, lInf) = (G, C) for the bounds the cells were counted
// under; a result counted without bounds is refused rather than noised as
// if it had been, and so is one counted under other bounds than were priced.
func sensitivity(req *Request) (l0, lInf int64, err error) {
	b := req.Result.Bounds
	if req.Bounds != (ir.Bounds{}) && b != req.Bounds {
		return 0, 0, pgerror.Errorf(pgerror.InternalError, "the counts were bounded otherwise than was planned")
	}
	return boundsSensitivity(b)
}

// boundsSensitivity is (l0, lInf) = (G, C).
func boundsSensitivity(b ir.Bounds) (l0, lInf int64, err error) {
	if b.MaxRowsPerUnit < 1 || b.MaxGroupsPerUnit < 1 {
		return 0, 0, pgerror.Errorf(pgerror.InternalError, "the counts were not bounded per privacy unit")
	}
	return b.MaxGroupsPerUnit, b.MaxRowsPerUnit, nil
}

// Price refuses what the mechanism cannot answer and returns the charge,
// before the data is read, from the bounds planned for the store.
func (m *dpCount) Price(req *Request) (Charge, error) {
	p, err := m.plan(req, req.Bounds)
	if err != nil {
		return Charge{}, err
	}
	return p.charge, nil
}

// CheckShare refuses an epsilon (and, for gaussian, a delta) the noise
// cannot use.
func (m *dpCount) CheckShare(epsilon, delta float64) error {
	return checkShare(&Request{Epsilon: epsilon, Delta: delta}, m.withDelta)
}

// Answer is the answer loop of laplace and gaussian: the plan from the
// bounds the cells were counted under, each group kept or dropped by the
// selection (when it selects), each kept cell noised at the counts' share.
func (m *dpCount) Answer(_ context.Context, req *Request) ([]Answer, Charge, error) {
	cells, err := requestCells(req)
	if err != nil {
		return nil, Charge{}, err
	}
	if _, _, err := sensitivity(req); err != nil {
		return nil, Charge{}, err
	}
	p, err := m.plan(req, req.Result.Bounds)
	if err != nil {
		return nil, Charge{}, err
	}
	countReq := p.countShare(req)
	answers := make([]Answer, len(cells))
	for i, c := range cells {
		keep, err := m.keep(&p, c)
		if err != nil {
			return nil, Charge{}, err
		}
		if !c.InDomain || !keep {
			answers[i] = Answer{Dropped: true}
			continue
		}
		if p.sums != nil {
			if answers[i], err = m.sumAnswer(req, &p, p.sums, c); err != nil {
				return nil, Charge{}, pgerror.Errorf(pgerror.InvalidParameterValue, "%s: %v", m.name, err)
			}
			continue
		}
		noisy, err := m.draw(countReq, c.Count, p.l0, p.lInf)
		if err != nil {
			return nil, Charge{}, pgerror.Errorf(pgerror.InvalidParameterValue, "%s: %v", m.name, err)
		}
		answers[i] = Answer{Int: max(noisy, 0)}
	}
	return thresholdAnswers(req.Query, answers), p.charge, nil
}

// boundsClaim states the per-person bounds for Describe.
func (m *dpCount) boundsClaim() string {
	rows, groups := "the table's max_rows_per_unit (default 1)", "the table's max_groups_per_unit (default 1)"
	if m.bounds.MaxRowsPerUnit > 0 {
		rows = fmt.Sprint(m.bounds.MaxRowsPerUnit)
	}
	if m.bounds.MaxGroupsPerUnit > 0 {
		groups = fmt.Sprint(m.bounds.MaxGroupsPerUnit)
	}
	return fmt.Sprintf("per person: each privacy unit counts at most C = %s rows in a cell and in at most G = %s cells of a query (chosen by a keyed hash)", rows, groups)
}

// requireDomain refuses a GROUP BY whose groups are not all declared public:
// a mechanism that noises counts but not the set of groups would reveal
// which groups exist.
func requireDomain(req *Request, mechanism string) error {
	if len(req.Query.GroupBy) == 0 || req.Result.DomainComplete {
		return nil
	}
	return domainRequired(mechanism)
}

func domainRequired(mechanism string) error {
	return &pgerror.Error{
		Code:    pgerror.FeatureNotSupported,
		Message: fmt.Sprintf("the %s mechanism answers GROUP BY only over columns with a declared public domain", mechanism),
		Hint:    "Declare the domain (a list of categories or an integer range) of each GROUP BY column in the table's config.",
	}
}

// requireDeclaredDomain is requireDomain before the data is read: every
// GROUP BY column must have a declared public domain in the catalog.
func requireDeclaredDomain(req *Request, mechanism string) error {
	if len(req.Query.GroupBy) == 0 {
		return nil
	}
	for _, g := range req.Query.GroupBy {
		if req.Table == nil {
			return domainRequired(mechanism)
		}
		col, ok := req.Table.Columns[strings.ToLower(g)]
		if !ok || col.Domain == nil {
			return domainRequired(mechanism)
		}
	}
	return nil
}

// checkShare refuses a per-query budget share the noise cannot honour, as
// an error the analyst can act on with SET.
func checkShare(req *Request, needDelta bool) error {
	if err := checkEpsilon(req.Epsilon); err != nil {
		return &pgerror.Error{Code: pgerror.InvalidParameterValue, Message: err.Error(), Hint: "Choose another value with SET epsilon."}
	}
	if !needDelta {
		return nil
	}
	if err := checkDelta(req.Delta); err != nil {
		return &pgerror.Error{Code: pgerror.InvalidParameterValue, Message: err.Error(), Hint: "Choose a delta > 0 with SET delta."}
	}
	return nil
}

// accountedCells is the common check of the mechanisms that charge a budget:
// a well-formed request, a GROUP BY only over declared domains, and a budget
// share the noise can use (with delta when withDelta).
func accountedCells(req *Request, name string, withDelta bool) ([]ir.Cell, error) {
	cells, err := requestCells(req)
	if err != nil {
		return nil, err
	}
	if err := requireDomain(req, name); err != nil {
		return nil, err
	}
	if err := checkShare(req, withDelta); err != nil {
		return nil, err
	}
	return cells, nil
}

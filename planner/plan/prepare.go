package plan

import (
	"strings"

	"countwall/ir"
	"countwall/pgerror"
)

// Prepare checks what every backend's Run checks before it reads anything
// and lays out the query's cells: a table and a query that belong together,
// a secret wherever keys or a choice of cells need one, and the group limit
// needs may raise. bounds are the contribution bounds a bounded run enforces
// and rank whether a unit's cells must then be chosen (both zero unless
// needs.Bound).
func Prepare(t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (shape *Shape, bounds ir.Bounds, rank bool, err error) {
	if t == nil || q == nil {
		return nil, bounds, false, pgerror.Errorf(pgerror.InternalError, "planner: Run needs a table and a query")
	}
	if needs.Key && len(secret) == 0 {
		return nil, bounds, false, pgerror.Errorf(pgerror.InternalError, "planner: contributor keys need a secret, and none was given")
	}
	if !strings.EqualFold(q.Table, t.Name) {
		return nil, bounds, false, pgerror.Errorf(pgerror.InternalError, "planner: query on table %q run against table %q", q.Table, t.Name)
	}
	if err := checkSums(t, q, needs); err != nil {
		return nil, bounds, false, err
	}
	shape, err = NewShape(t, q)
	if err != nil {
		return nil, bounds, false, err
	}
	if needs.GroupLimit > 0 {
		shape.MaxGroups = needs.GroupLimit
	}
	if needs.Bound {
		bounds, rank = EffectiveBounds(t, q, needs, shape)
		if rank && len(secret) == 0 {
			return nil, bounds, false, pgerror.Errorf(pgerror.InternalError, "planner: choosing a unit's cells needs a secret, and none was given")
		}
	}
	return shape, bounds, rank, nil
}

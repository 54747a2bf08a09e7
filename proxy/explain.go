package proxy

import (
	"context"
	"fmt"
	"strings"

	"countwall/ir"
	"countwall/mechanisms"
	"countwall/planner/plan"
	"countwall/proxy/state"
)

// EXPLAIN SELECT ... says what a query would cost and how wrong its answer
// may be, without reading the data and without a charge. It runs every
// check the query would meet before its read, in the same order (parse and
// policy, the GROUP BY domains, the mechanism's price, the ledger's caps),
// so a statement the firewall would refuse is refused by EXPLAIN with the
// same SQLSTATE; then, instead of charging and reading, it shows the plan
// as PostgreSQL shows one: a single text column named QUERY PLAN.

// planColumn is EXPLAIN's one output column.
var planColumn = Column{Name: "QUERY PLAN", Type: ColumnText}

// priced is a query checked and priced before its read.
type priced struct {
	req    *mechanisms.Request
	needs  ir.Needs
	charge mechanisms.Charge
}

// price runs every check of a query that needs no data: the GROUP BY
// domains, the bounds the store will enforce, and the mechanism's price at
// the session's share.
func (s *Session) price(rt *runtime, q *ir.Query) (priced, error) {
	table := rt.catalog.Tables[q.Table]
	if err := checkGroupDomains(table, q, rt.mech); err != nil {
		return priced{}, err
	}
	needs := queryNeeds(rt.mech, table, q)
	eps, delta := s.share(rt)
	req := &mechanisms.Request{Query: q, Table: table, Epsilon: eps, Delta: delta}
	if needs.Bound {
		var err error
		if req.Bounds, err = plan.Bounds(table, q, needs); err != nil {
			return priced{}, err
		}
	}
	charge, err := mechanisms.Price(rt.mech, req)
	if err != nil {
		return priced{}, err
	}
	return priced{req: req, needs: needs, charge: charge}, nil
}

// explain answers EXPLAIN of q: priced as the query would be, held to the
// caps as the ledger would hold it, neither charged nor read.
func (s *Session) explain(ctx context.Context, rt *runtime, q *ir.Query) (*Result, error) {
	p, err := s.price(rt, q)
	if err != nil {
		return nil, err
	}
	lines := []string{fmt.Sprintf("Count on %s under %s", q.Table, rt.mech.Name())}
	add := func(label, text string) { lines = append(lines, "  "+label+": "+text) }
	if len(q.GroupBy) > 0 {
		add("Groups", groupsText(p.req.Table, q, rt.mech))
	}
	if q.HasSums() {
		add("Aggregates", aggregatesText(q, rt.mech))
	}
	for _, l := range mechanisms.Explain(rt.mech, p.req) {
		add(l.Label, l.Text)
	}
	if p.charge.Kind == mechanisms.AccountingNone {
		add("Charge", "nothing: the mechanism keeps no budget")
	} else {
		before, after, err := s.previewCharge(ctx, p.charge)
		if err != nil {
			return nil, err
		}
		add("Charge", chargeText(p.req, p.charge, after.EpsilonSpent-before.EpsilonSpent))
		f := state.FormatFigure
		add("Budget after", fmt.Sprintf("%s epsilon %s of %s spent (%s left), delta %s of %s (%s left)",
			p.charge.Kind, f(after.EpsilonSpent), f(after.EpsilonCap), f(after.EpsilonRemaining()), f(after.DeltaSpent), f(after.DeltaCap), f(after.DeltaRemaining())))
	}
	add("Data read", "none; nothing charged")
	res := &Result{Columns: []Column{planColumn}, Tag: "EXPLAIN"}
	for _, l := range lines {
		res.Rows = append(res.Rows, []Value{{Text: l}})
		res.Suppressed = append(res.Suppressed, false)
	}
	return res, nil
}

// previewCharge is the analyst's balance in the charge's kind now and as
// it would be after the charge, or the ledger's refusal of it.
func (s *Session) previewCharge(ctx context.Context, c mechanisms.Charge) (before, after state.Balance, err error) {
	bals, err := s.engine.budget.Balances(ctx, s.analyst)
	if err != nil {
		return before, after, err
	}
	for _, b := range bals {
		if b.Kind == c.Kind {
			after, err = state.Preview(s.analyst, b, c)
			return b, after, err
		}
	}
	return before, after, fmt.Errorf("no balance of kind %q", c.Kind)
}

// groupsText says how a GROUP BY's groups are chosen.
func groupsText(t *ir.Table, q *ir.Query, m mechanisms.Mechanism) string {
	var undeclared []string
	for _, g := range q.GroupBy {
		if c := t.Columns[g]; c == nil || c.Domain == nil {
			undeclared = append(undeclared, g)
		}
	}
	cols := strings.Join(q.GroupBy, ", ")
	switch {
	case len(undeclared) == 0:
		return cols + ": every cell of the declared domains, zeros included"
	case mechanisms.SelectsPartitions(m):
		return cols + " (no declared domain for " + strings.Join(undeclared, ", ") + "): the groups partition selection releases"
	default:
		return cols + " (no declared domain for " + strings.Join(undeclared, ", ") + "): low counts left out"
	}
}

// chargeText states a charge at the session's share; converted is what
// the ledger's epsilon would rise by.
func chargeText(req *mechanisms.Request, c mechanisms.Charge, converted float64) string {
	text := fmt.Sprintf("%s epsilon %g", c.Kind, c.Epsilon)
	if c.Delta > 0 {
		text += fmt.Sprintf(", delta %g", c.Delta)
	}
	if c.Rho > 0 {
		text = fmt.Sprintf("%s rho %.6g (zCDP)", c.Kind, c.Rho)
		if c.Epsilon > 0 || c.Delta > 0 {
			text += fmt.Sprintf(" and epsilon %g, delta %g (partition selection)", c.Epsilon, c.Delta)
		}
		text += fmt.Sprintf("; the spent epsilon rises by %.6g", converted)
	}
	return text + fmt.Sprintf(" at the session's share (epsilon %g, delta %g)", req.Epsilon, req.Delta)
}

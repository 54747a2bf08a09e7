package proxy

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"countwall/ir"
	"countwall/mechanisms"
	"countwall/proxy/state"
	"countwall/proxy/state/release"
)

// query answers a COUNT query. Everything that can refuse it runs before the
// protected data is read: the policy (already, in Parse), the GROUP BY
// domains, and the mechanism's price, which the ledger then charges durably.
// Only then does the backend read the data and the mechanism answer; a read
// that fails after the charge (a cancel, a timeout, an internal error) keeps
// its charge, which errs on the safe side. So no refusal, no charge and no
// refusal's timing depends on the rows.
//
// The answer comes with its record for the audit (releaseQuery): the query
// as validated, under the bounds it was computed with. A failure after the
// charge keeps the charge in the answer, for the audit.
func (s *Session) query(ctx context.Context, rt *runtime, q *ir.Query, fp string) answer {
	refused := func(charge mechanisms.Charge, err error) answer {
		return answer{kind: release.KindQuery, charge: charge, err: err}
	}
	p, err := s.price(rt, q)
	if err != nil {
		return refused(mechanisms.Charge{}, err)
	}
	table, needs, req, charge := p.req.Table, p.needs, p.req, p.charge
	var notice string
	if charge.Kind != mechanisms.AccountingNone {
		if notice, err = s.charge(ctx, rt, fp, charge); err != nil {
			return refused(mechanisms.Charge{}, err)
		}
	}
	cells, err := s.engine.backend.Run(ctx, table, q, needs, s.engine.secret)
	if err != nil {
		return refused(charge, err)
	}
	req.Result = cells
	answers, answered, err := rt.mech.Answer(ctx, req)
	if err != nil {
		return refused(charge, err)
	}
	if answered != charge {
		return refused(charge, fmt.Errorf("mechanism %s charged %+v for an answer priced at %+v", rt.mech.Name(), answered, charge))
	}
	if len(answers) != len(cells.Cells) {
		return refused(charge, fmt.Errorf("mechanism %s answered %d cells of %d", rt.mech.Name(), len(answers), len(cells.Cells)))
	}
	var res *Result
	if q.HasSums() {
		res = sumRows(rt, q, cells, answers, notice)
		s.addSumIntervals(rt, req, answers, res)
	} else {
		res = s.rows(rt, q, cells, answers, notice)
		s.addIntervals(rt, req, answers, res)
	}
	maxGroups := table.Policy.MaxGroups
	if maxGroups <= 0 {
		maxGroups = ir.DefaultPolicy().MaxGroups
	}
	truncateGroups(res, maxGroups)
	noteWithheld(res)
	var bounds *ir.Bounds
	if needs.Bound {
		bounds = &req.Bounds
	}
	return answer{kind: release.KindQuery, res: res, charge: charge, query: releaseQuery(q, bounds)}
}

// charge records a priced statement's charge durably, before the data is
// read; the answer's audit row follows once the answer is known.
func (s *Session) charge(ctx context.Context, rt *runtime, fp string, charge mechanisms.Charge) (notice string, err error) {
	bal, err := s.engine.budget.Charge(ctx, state.EntryOf(s.analyst, rt.mech.Name(), fp, charge))
	if err != nil {
		return "", err
	}
	return bal.Notice(charge), nil
}

// rows builds the result of an answered query: a row per answered cell.
func (s *Session) rows(rt *runtime, q *ir.Query, cells *ir.Result, answers []mechanisms.Answer, notice string) *Result {
	res := &Result{Columns: queryColumns(rt, q), Notice: notice, groupsAfter: q.GroupsAfterCount}
	floatOut := res.Columns[len(res.Columns)-1].Type == ColumnFloat8
	stored := storedTypes(rt, q)
	for i, a := range answers {
		if a.Dropped {
			continue
		}
		row := make([]Value, 0, len(q.GroupBy)+1)
		for k, g := range cells.Cells[i].Group {
			row = append(row, groupValue(res.Columns[k].Type, stored[k], g))
		}
		row = append(row, answerValue(a, floatOut))
		res.Rows = append(res.Rows, row)
		res.Suppressed = append(res.Suppressed, a.Suppressed)
	}
	res.Tag = "SELECT " + strconv.Itoa(len(res.Rows))
	return res
}

// answerValue is an answer as the client receives it. A withheld count is
// NULL: a 0 would read as a count, and under a mechanism that withholds
// small counts every 0 it publishes is marked withheld (the mechanism sees
// to it), so the NULL says no more than the 0 did. Its Int and Float stay
// 0, the value the audit keeps.
func answerValue(a mechanisms.Answer, floatOut bool) Value {
	switch {
	case a.Suppressed:
		return Value{Null: true}
	case floatOut && a.IsFloat:
		return Value{Float: a.Float}
	case floatOut:
		return Value{Float: float64(a.Int)}
	case a.IsFloat:
		return Value{Int: int64(math.Round(a.Float))}
	default:
		return Value{Int: a.Int}
	}
}

// maxWithheldListed is how many withheld rows a notice names.
const maxWithheldListed = 10

// noteWithheld adds to the answer's notice which counts were withheld
// (NULL), naming each row by its group values.
func noteWithheld(res *Result) {
	var rows []string
	for i, withheld := range res.Suppressed {
		if withheld {
			rows = append(rows, groupOf(res, i))
		}
	}
	if len(rows) == 0 {
		return
	}
	note := "the count is withheld (NULL): too small to publish under the mechanism in force"
	if res.countColumn() > 0 {
		listed := rows[:min(len(rows), maxWithheldListed)]
		note = fmt.Sprintf("%d of %d counts withheld (NULL), too small to publish under the mechanism in force: %s",
			len(rows), len(res.Rows), strings.Join(listed, "; "))
		if more := len(rows) - len(listed); more > 0 {
			note += fmt.Sprintf("; and %d more", more)
		}
	}
	if res.Notice != "" {
		note = res.Notice + "\n" + note
	}
	res.Notice = note
}

// groupOf names row i of a GROUP BY answer by its group values.
func groupOf(res *Result, i int) string {
	parts := make([]string, 0, res.countColumn())
	for c := range res.countColumn() {
		parts = append(parts, res.Columns[c].Name+" = "+res.Rows[i][c].Format(res.Columns[c].Type))
	}
	return strings.Join(parts, ", ")
}

package attackmodel

import (
	"context"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"countwall/attacks"
	"countwall/ir"
	"countwall/mechanisms"
	"countwall/pgerror"
	"countwall/planner"
	"countwall/planner/grouped"
)

// model answers COUNT queries over a grouped table through a mechanism, and
// SET epsilon and SHOW budget, epsilon and mechanism: spending is summed by
// accounting kind, with no cap. It is not safe for concurrent use.
type model struct {
	store   *grouped.Store
	table   *ir.Table
	catalog *ir.Catalog
	mech    mechanisms.Mechanism
	parsed  map[string]ir.Statement // attacks repeat statements; parsing dominates
	epsilon float64
	spent   map[mechanisms.Accounting]float64
	queries int
}

// modelSecret keys record keys and cell ranks where a mechanism asks for them.
var modelSecret = []byte("countwall attack model secret")

// newModel answers over tbl through the named mechanism, its fresh noise
// seeded by seed (0: from the operating system).
func newModel(t testing.TB, tbl ir.GroupedTable, mechanism string, params map[string]any, seed int64) *model {
	t.Helper()
	store, err := grouped.New(tbl)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mechanisms.New(mechanism, mechanisms.Params(params), mechanisms.Env{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	unit := tbl.Unit
	if unit == "" {
		unit = "_unit"
	}
	table := &ir.Table{Name: tbl.Name, PrivacyUnit: unit, Columns: map[string]*ir.Column{unit: {Name: unit, Type: ir.TypeInt}},
		Policy: ir.DefaultPolicy(), UnitKeyed: true}
	for _, c := range tbl.Columns {
		table.Columns[strings.ToLower(c.Name)] = &ir.Column{Name: strings.ToLower(c.Name), Type: c.Type}
	}
	return &model{store: store, table: table, catalog: &ir.Catalog{Tables: map[string]*ir.Table{tbl.Name: table}}, mech: m,
		parsed: map[string]ir.Statement{}, epsilon: 0.1, spent: map[mechanisms.Accounting]float64{}}
}

// Queries is how many statements the model has been sent.
func (m *model) Queries() int { return m.queries }

func (m *model) Query(ctx context.Context, sql string) (*attacks.Rows, error) {
	m.queries++
	st, ok := m.parsed[sql]
	if !ok {
		var err error
		if st, err = planner.Parse(sql, nil, m.catalog); err != nil {
			return nil, err
		}
		if len(m.parsed) > 1<<16 {
			clear(m.parsed)
		}
		m.parsed[sql] = st
	}
	switch st := st.(type) {
	case *ir.Query:
		return m.answer(ctx, st)
	case *ir.Set:
		v, err := strconv.ParseFloat(strings.TrimSpace(st.Value), 64)
		if st.Name != "epsilon" || err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, pgerror.Errorf(pgerror.InvalidParameterValue, "the model sets only a positive epsilon")
		}
		m.epsilon = v
		return &attacks.Rows{}, nil
	case *ir.Show:
		return m.show(st.Name)
	}
	return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "the model answers COUNT queries, SET epsilon and SHOW")
}

func (m *model) answer(ctx context.Context, q *ir.Query) (*attacks.Rows, error) {
	res, err := m.store.Run(ctx, m.table, q, m.mech.Needs(), modelSecret)
	if err != nil {
		return nil, err
	}
	answers, charge, err := m.mech.Answer(ctx, &mechanisms.Request{Query: q, Table: m.table, Bounds: res.Bounds, Result: res, Epsilon: m.epsilon})
	if err != nil {
		return nil, err
	}
	if charge.Kind != mechanisms.AccountingNone {
		m.spent[charge.Kind] += charge.Epsilon
	}
	v := strconv.FormatInt(answers[0].Int, 10)
	if answers[0].IsFloat {
		v = strconv.FormatFloat(answers[0].Float, 'g', -1, 64)
	}
	return &attacks.Rows{Columns: []string{q.Alias}, Values: [][]string{{v}}}, nil
}

// show answers SHOW budget (the Engine's header; nothing remains is +Inf),
// epsilon and mechanism.
func (m *model) show(name string) (*attacks.Rows, error) {
	switch name {
	case "budget":
		rows := &attacks.Rows{Columns: []string{"kind", "epsilon_spent", "epsilon_remaining", "delta_spent", "delta_remaining"}}
		for _, kind := range slices.Sorted(maps.Keys(m.spent)) {
			rows.Values = append(rows.Values, []string{string(kind), strconv.FormatFloat(m.spent[kind], 'g', -1, 64), "+Inf", "0", "+Inf"})
		}
		return rows, nil
	case "epsilon":
		return &attacks.Rows{Columns: []string{"epsilon"}, Values: [][]string{{strconv.FormatFloat(m.epsilon, 'g', -1, 64)}}}, nil
	case "mechanism":
		return &attacks.Rows{Columns: []string{"mechanism"}, Values: [][]string{{m.mech.Name()}}}, nil
	}
	return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "the model shows budget, epsilon and mechanism, not %s", name)
}

// attackNamed is the registered attack called name.
func attackNamed(t testing.TB, name string) *attacks.Attack {
	t.Helper()
	a, ok := attacks.Lookup(name)
	if !ok {
		t.Fatalf("no attack %q", name)
	}
	return a
}

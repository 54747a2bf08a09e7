package state

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"countwall/proxy/state/release"
)

// An answered query's structured record (release.Query) is kept in two
// parts. Its template is the record with every value replaced by a slot:
// "$i" for the row's own i-th constant (the statement's text holds nearly
// every value the planner read), "$i+1" for one more than that integer
// (COUNT(*) > $i counts at least $i+1), "#" for the next value kept beside
// it. The template is JSON, interned in audit_text: the statements of an
// attack differ in their constants only, so thousands of rows share one.
// The row's query column holds the template's id and the values no
// constant holds, packed as constants are.
type queryTemplate struct {
	Table    string             `json:"t"`
	GroupBy  []string           `json:"g,omitempty"`
	Distinct bool               `json:"d,omitempty"`
	AtLeast  string             `json:"a,omitempty"` // a slot
	Bounds   *release.Bounds    `json:"b,omitempty"`
	Where    []conjunctTemplate `json:"w,omitempty"`
	// Aggregates are a query with SUM or AVG's (release.Query.Aggregates).
	Aggregates []release.Aggregate `json:"s,omitempty"`
}

// conjunctTemplate is a release.Conjunct without its text, which the
// conjunct's constructor writes again when the row is read.
type conjunctTemplate struct {
	Column  string             `json:"c,omitempty"`
	Op      release.Op         `json:"o"`
	Values  []string           `json:"v,omitempty"` // slots
	Inner   []conjunctTemplate `json:"i,omitempty"`
	Compare release.Op         `json:"k,omitempty"`
	Expr    string             `json:"x,omitempty"`
}

const slotKept = "#"

// encodeQuery packs q for a row whose constants are consts; nil for none.
// The template is written by hand, not by encoding/json: it is made for
// every answered row, and only read back once a listing.
func encodeQuery(q *release.Query, consts []release.Constant, ref textRef) ([]byte, error) {
	if q == nil {
		return nil, nil
	}
	m := slotter{consts: consts}
	b := make([]byte, 0, 64+48*len(q.Where))
	b = append(b, `{"t":`...)
	b = appendJSONString(b, q.Table)
	if len(q.GroupBy) > 0 {
		b = append(b, `,"g":[`...)
		for i, g := range q.GroupBy {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, g)
		}
		b = append(b, ']')
	}
	if q.Distinct {
		b = append(b, `,"d":true`...)
	}
	if q.AtLeast != nil {
		b = append(b, `,"a":`...)
		b = appendJSONString(b, m.atLeast(*q.AtLeast))
	}
	if q.Bounds != nil {
		b = fmt.Appendf(b, `,"b":{"max_rows_per_unit":%d,"max_groups_per_unit":%d}`, q.Bounds.MaxRowsPerUnit, q.Bounds.MaxGroupsPerUnit)
	}
	if len(q.Where) > 0 {
		b = append(b, `,"w":`...)
		b = m.appendConjuncts(b, q.Where)
	}
	if len(q.Aggregates) > 0 {
		aggs, err := json.Marshal(q.Aggregates)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"s":`...), aggs...)
	}
	b = append(b, '}')
	id, err := ref(string(b))
	if err != nil {
		return nil, err
	}
	kept, err := encodeConstants(m.kept, ref)
	if err != nil {
		return nil, err
	}
	return append(binary.AppendUvarint(nil, uint64(id)), kept...), nil
}

// slotter replaces values by slots, keeping those no constant holds.
type slotter struct {
	consts []release.Constant
	next   int // where the search for the next value starts: values come in the constants' order
	kept   []release.Constant
}

// slot is the slot of v.
func (m *slotter) slot(v release.Constant) string {
	n := len(m.consts)
	for k := range n {
		if i := (m.next + k) % n; m.consts[i] == v {
			m.next = i + 1
			return "$" + strconv.Itoa(i+1)
		}
	}
	m.kept = append(m.kept, v)
	return slotKept
}

// atLeast is the slot of a threshold's AtLeast: the constant of
// COUNT(*) >= $i, one more than that of COUNT(*) > $i, or kept.
func (m *slotter) atLeast(v int64) string {
	for i, c := range m.consts {
		if c.String {
			continue
		}
		switch n, err := strconv.ParseInt(c.Text, 10, 64); {
		case err != nil:
		case n == v:
			return "$" + strconv.Itoa(i+1)
		case n < math.MaxInt64 && n+1 == v:
			return "$" + strconv.Itoa(i+1) + "+1"
		}
	}
	m.kept = append(m.kept, release.Constant{Text: strconv.FormatInt(v, 10)})
	return slotKept
}

func (m *slotter) appendConjuncts(b []byte, cs []release.Conjunct) []byte {
	b = append(b, '[')
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"o":`...)
		b = appendJSONString(b, string(c.Op))
		if c.Column != "" {
			b = append(b, `,"c":`...)
			b = appendJSONString(b, c.Column)
		}
		if len(c.Values) > 0 {
			b = append(b, `,"v":[`...)
			for j, v := range c.Values {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, m.slot(v))
			}
			b = append(b, ']')
		}
		if len(c.Inner) > 0 {
			b = append(b, `,"i":`...)
			b = m.appendConjuncts(b, c.Inner)
		}
		if c.Compare != "" {
			b = append(b, `,"k":`...)
			b = appendJSONString(b, string(c.Compare))
		}
		if c.Expr != "" {
			b = append(b, `,"x":`...)
			b = appendJSONString(b, c.Expr)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendJSONString writes s as a JSON string: quotes, backslashes and
// control characters escaped, everything else (valid UTF-8, as every name
// and statement the audit keeps is) as it is.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = fmt.Appendf(b, `\u%04x`, c)
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// queryReader reads the query column of one listing's rows, each template
// parsed once.
type queryReader struct {
	resolve   textOf
	templates map[int64]*queryTemplate
}

// decode reads a row's record; nil for a row that keeps none.
func (r *queryReader) decode(b []byte, consts []release.Constant) (*release.Query, error) {
	if len(b) == 0 {
		return nil, nil
	}
	id, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errBadBlob
	}
	t, err := r.template(int64(id))
	if err != nil {
		return nil, err
	}
	kept, err := decodeConstants(b[n:], r.resolve)
	if err != nil {
		return nil, err
	}
	f := filler{consts: consts, kept: kept}
	q := &release.Query{Table: t.Table, GroupBy: t.GroupBy, Distinct: t.Distinct, Bounds: t.Bounds, Aggregates: t.Aggregates}
	if t.AtLeast != "" {
		v, err := strconv.ParseInt(f.value(t.AtLeast).Text, 10, 64)
		if err != nil {
			return nil, errBadBlob
		}
		q.AtLeast = &v
	}
	q.Where = f.conjuncts(t.Where)
	if f.err != nil || len(f.kept) > 0 {
		return nil, errBadBlob
	}
	return q, nil
}

func (r *queryReader) template(id int64) (*queryTemplate, error) {
	if t, ok := r.templates[id]; ok {
		return t, nil
	}
	js, err := r.resolve(id)
	if err != nil {
		return nil, err
	}
	t := &queryTemplate{}
	if err := json.Unmarshal([]byte(js), t); err != nil {
		return nil, fmt.Errorf("reading a query's record: %w", err)
	}
	if r.templates == nil {
		r.templates = map[int64]*queryTemplate{}
	}
	r.templates[id] = t
	return t, nil
}

// filler puts a row's values in a template's slots.
type filler struct {
	consts, kept []release.Constant
	err          error
}

func (f *filler) value(slot string) release.Constant {
	if slot == slotKept {
		if len(f.kept) == 0 {
			f.err = errBadBlob
			return release.Constant{}
		}
		v := f.kept[0]
		f.kept = f.kept[1:]
		return v
	}
	ref, plusOne := strings.CutSuffix(slot, "+1")
	i, err := strconv.Atoi(strings.TrimPrefix(ref, "$"))
	if err != nil || i < 1 || i > len(f.consts) || !strings.HasPrefix(ref, "$") {
		f.err = errBadBlob
		return release.Constant{}
	}
	c := f.consts[i-1]
	if plusOne {
		n, err := strconv.ParseInt(c.Text, 10, 64)
		if err != nil || c.String || n == math.MaxInt64 {
			f.err = errBadBlob
			return release.Constant{}
		}
		c.Text = strconv.FormatInt(n+1, 10)
	}
	return c
}

// conjuncts makes the template's conjuncts again with their values, each
// by its constructor, which writes its text.
func (f *filler) conjuncts(ts []conjunctTemplate) []release.Conjunct {
	if len(ts) == 0 {
		return nil
	}
	out := make([]release.Conjunct, len(ts))
	for i, t := range ts {
		vs := make([]release.Constant, len(t.Values))
		for j, s := range t.Values {
			vs[j] = f.value(s)
		}
		out[i] = f.conjunct(t, vs)
	}
	return out
}

func (f *filler) conjunct(t conjunctTemplate, vs []release.Constant) release.Conjunct {
	arity := func(n int) bool {
		if len(vs) != n {
			f.err = errBadBlob
		}
		return len(vs) == n
	}
	switch t.Op {
	case release.OpEq, release.OpNe, release.OpLt, release.OpLe, release.OpGt, release.OpGe, release.OpLike, release.OpNotLike:
		if arity(1) {
			return release.Compare(t.Column, t.Op, vs[0])
		}
	case release.OpBetween, release.OpNotBetween:
		if arity(2) {
			return release.Between(t.Column, t.Op == release.OpNotBetween, vs[0], vs[1])
		}
	case release.OpIn, release.OpNotIn:
		return release.In(t.Column, t.Op == release.OpNotIn, vs)
	case release.OpIsNull, release.OpIsNotNull:
		if arity(0) {
			return release.IsNull(t.Column, t.Op == release.OpIsNotNull)
		}
	case release.OpAnd:
		return release.And(f.conjuncts(t.Inner))
	case release.OpOr:
		return release.Or(f.conjuncts(t.Inner))
	case release.OpNot:
		return release.Not(f.conjuncts(t.Inner))
	case release.OpExpr:
		if arity(1) {
			return release.Expr(t.Column, t.Expr, t.Compare, vs[0])
		}
	default:
		f.err = errBadBlob
	}
	return release.Conjunct{}
}

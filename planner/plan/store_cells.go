// Package plan is what every backend shares around a validated query: the
// checks before a run (Prepare), the layout of its output cells (Shape,
// Accumulator, ORDER BY), the contribution bounds it enforces, the normalised
// condition list, record keys and cell ranks, how a group value is read, and
// reading cells from database/sql rows. It reads no data itself.
package plan

import (
	"cmp"
	"countwall/ir"
	"countwall/pgerror"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Shape is what Run knows about a query's output cells before reading any
// data: the group columns, whether their public domains make the answer
// domain-complete, and the order the cells go out in.
type Shape struct {
	Columns   []*ir.Column
	orderBy   []ir.Order
	Complete  bool           // every group column has a domain (or there is none)
	Product   []ir.Cell      // domain-complete: every cell of the domain product, zero counts
	index     map[string]int // domain-complete: cell key -> position in product
	MaxGroups int
	// newSums are a cell's empty sums for a query with sums (nil otherwise):
	// what a cell no row reaches holds.
	newSums func() []ir.SumValue
}

func NewShape(t *ir.Table, q *ir.Query) (*Shape, error) {
	s := &Shape{orderBy: q.OrderBy, Complete: true, MaxGroups: t.Policy.MaxGroups}
	if q.HasSums() {
		s.newSums = func() []ir.SumValue { return NewSums(t, q) }
	}
	if s.MaxGroups <= 0 {
		s.MaxGroups = ir.DefaultPolicy().MaxGroups
	}
	for _, g := range q.GroupBy {
		col, ok := t.Columns[strings.ToLower(g)]
		if !ok {
			return nil, pgerror.Errorf(pgerror.InternalError, "column %q is not in the catalog of table %q", g, t.Name)
		}
		s.Columns = append(s.Columns, col)
		if col.Domain == nil {
			s.Complete = false
		}
	}
	for _, o := range q.OrderBy {
		if !slices.ContainsFunc(q.GroupBy, func(g string) bool { return strings.EqualFold(g, o.Column) }) {
			return nil, pgerror.Errorf(pgerror.InternalError, "ORDER BY column %q is not a GROUP BY column", o.Column)
		}
	}
	if s.Complete && len(s.Columns) > 0 {
		if err := s.buildProduct(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// buildProduct lays out every cell of the domain product in domain order:
// categories as listed, ranges ascending, the last column varying fastest.
func (s *Shape) buildProduct() error {
	size := int64(1)
	values := make([][]string, len(s.Columns))
	for i, col := range s.Columns {
		n := col.Domain.Size()
		if n <= 0 {
			return pgerror.Errorf(pgerror.InternalError, "the public domain of column %q is empty", col.Name)
		}
		if size > math.MaxInt64/n || size*n > int64(s.MaxGroups) {
			return &pgerror.Error{Code: pgerror.ProgramLimitExceeded,
				Message: "the public domains of the GROUP BY columns have more cells than the limit of " +
					strconv.Itoa(s.MaxGroups) + " groups",
				Hint: "Group by fewer columns or ask for the limit (max_groups) to be raised."}
		}
		size *= n
		values[i] = domainValues(col.Domain)
	}
	s.Product = make([]ir.Cell, 0, size)
	s.index = make(map[string]int, size)
	idx := make([]int, len(s.Columns))
	for {
		group := make([]ir.GroupValue, len(s.Columns))
		for i, j := range idx {
			group[i] = ir.GroupValue{Text: values[i][j]}
		}
		s.index[GroupKey(group)] = len(s.Product)
		s.Product = append(s.Product, ir.Cell{Group: group, InDomain: true})
		// Advance the odometer, last column fastest.
		i := len(idx) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(values[i]) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return nil
		}
	}
}

// domainValues renders a domain's values as GroupValue texts.
func domainValues(d *ir.Domain) []string {
	if !d.IsRange {
		return d.Categories
	}
	out := make([]string, 0, d.Size())
	for v := d.Min; ; v++ {
		out = append(out, strconv.FormatInt(v, 10))
		if v == d.Max {
			return out
		}
	}
}

// GroupKey is an unambiguous map key for a group: each value is length-prefixed.
func GroupKey(g []ir.GroupValue) string {
	var b strings.Builder
	for _, v := range g {
		if v.Null {
			b.WriteString("N;")
			continue
		}
		b.WriteString(strconv.Itoa(len(v.Text)))
		b.WriteByte(':')
		b.WriteString(v.Text)
	}
	return b.String()
}

// inDomain reports whether a value lies in a column's declared domain.
func inDomain(d *ir.Domain, v ir.GroupValue) bool {
	if v.Null {
		return false
	}
	if d.IsRange {
		n, err := strconv.ParseInt(v.Text, 10, 64)
		return err == nil && n >= d.Min && n <= d.Max
	}
	return slices.Contains(d.Categories, v.Text)
}

// cellAccumulator collects the cells SQLite returns. For a domain-complete
// query it fills in the product and drops out-of-domain groups, so memory stays
// bounded by the product; otherwise it refuses more than maxGroups cells as
// soon as SQLite returns one too many.
type cellAccumulator struct {
	shape *Shape
	cells []ir.Cell
}

func (s *Shape) NewAccumulator() *cellAccumulator {
	a := &cellAccumulator{shape: s}
	if s.Product != nil {
		a.cells = slices.Clone(s.Product)
		if s.newSums != nil {
			for i := range a.cells {
				a.cells[i].Sums = s.newSums()
			}
		}
	}
	return a
}

func (a *cellAccumulator) Add(c ir.Cell) error {
	s := a.shape
	if s.Product != nil {
		// Every backend groups by the value as the column's type reads it,
		// so one cell is found at most once; adding keeps a cell the sum of
		// what maps to it even if that ever failed.
		if i, ok := s.index[GroupKey(c.Group)]; ok {
			a.cells[i].Count += c.Count
			a.cells[i].Units += c.Units
			a.cells[i].Key += c.Key
			if c.Sums != nil {
				AddSums(a.cells[i].Sums, c.Sums)
			}
		}
		return nil
	}
	for i, col := range s.Columns {
		if col.Domain != nil && !inDomain(col.Domain, c.Group[i]) {
			c.InDomain = false
		}
	}
	if len(a.cells) >= s.MaxGroups {
		return &pgerror.Error{Code: pgerror.ProgramLimitExceeded,
			Message: "the query has more than the limit of " + strconv.Itoa(s.MaxGroups) + " groups",
			Hint:    "Group by fewer or coarser columns, or declare public domains for them."}
	}
	a.cells = append(a.cells, c)
	return nil
}

func (a *cellAccumulator) Result() []ir.Cell {
	if len(a.shape.Columns) == 0 && len(a.cells) == 0 {
		// An aggregate without GROUP BY always has one row; this only guards
		// the invariant that a plain COUNT yields exactly one cell.
		return []ir.Cell{{InDomain: true, Sums: a.shape.emptySums()}}
	}
	return a.cells
}

// emptySums are a cell's sums before any row: nil for a COUNT query.
func (s *Shape) emptySums() []ir.SumValue {
	if s.newSums == nil {
		return nil
	}
	return s.newSums()
}

// Order applies ORDER BY with a stable sort, so cells equal on the ORDER BY
// columns keep domain order (or SQLite's group order).
func (s *Shape) Order(cells []ir.Cell) {
	if len(s.orderBy) == 0 {
		return
	}
	type term struct {
		pos  int
		typ  ir.ColumnType
		desc bool
	}
	terms := make([]term, 0, len(s.orderBy))
	for _, o := range s.orderBy {
		for i, col := range s.Columns {
			if strings.EqualFold(col.Name, o.Column) {
				terms = append(terms, term{pos: i, typ: col.Type, desc: o.Desc})
				break
			}
		}
	}
	slices.SortStableFunc(cells, func(a, b ir.Cell) int {
		for _, t := range terms {
			c := CompareGroupValues(a.Group[t.pos], b.Group[t.pos], t.typ)
			if t.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}

// CompareGroupValues orders values as SQLite does: NULL first, then numbers
// (numerically, for integer and real columns), then text bytewise.
func CompareGroupValues(a, b ir.GroupValue, typ ir.ColumnType) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return -1
	case b.Null:
		return 1
	}
	if typ == ir.TypeInt || typ == ir.TypeReal {
		ai, aerr := strconv.ParseInt(a.Text, 10, 64)
		bi, berr := strconv.ParseInt(b.Text, 10, 64)
		if aerr == nil && berr == nil {
			return cmp.Compare(ai, bi)
		}
		af, aerr := strconv.ParseFloat(a.Text, 64)
		bf, berr := strconv.ParseFloat(b.Text, 64)
		switch {
		case aerr == nil && berr == nil:
			return cmp.Compare(af, bf)
		case aerr == nil:
			return -1
		case berr == nil:
			return 1
		}
	}
	return strings.Compare(a.Text, b.Text)
}

package grouped

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	_ "modernc.org/sqlite" // FromSQLite reads the protected table read-only

	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
	"countwall/planner/plan"
)

// Store answers COUNT queries without GROUP BY over one grouped table. It is
// safe for concurrent use: it never changes after New.
type Store struct {
	table   string
	unit    string
	columns []ir.GroupedColumn
	groups  []ir.Group
	model   ir.KeyModel
	seed    uint64
	total   int64 // the table size: every group's count
}

// New checks the groups against their columns.
func New(t ir.GroupedTable) (*Store, error) {
	unit := strings.ToLower(t.Unit)
	if unit == "" {
		unit = "_unit"
	}
	for _, c := range t.Columns {
		if c.Type != ir.TypeInt && c.Type != ir.TypeText {
			return nil, fmt.Errorf("column %q: only integer and text columns are supported", c.Name)
		}
		if strings.EqualFold(c.Name, unit) {
			return nil, fmt.Errorf("column %q is the privacy unit; each row is its own unit and is not grouped", c.Name)
		}
	}
	for i, g := range t.Groups {
		if len(g.Values) != len(t.Columns) {
			return nil, fmt.Errorf("group %d has %d values for %d columns", i, len(g.Values), len(t.Columns))
		}
		for j, v := range g.Values {
			_, isInt := v.(int64)
			_, isText := v.(string)
			if (t.Columns[j].Type == ir.TypeInt && !isInt) || (t.Columns[j].Type == ir.TypeText && !isText) {
				return nil, fmt.Errorf("group %d: value %d is a %T, but column %q is %s", i, j, v, t.Columns[j].Name, t.Columns[j].Type)
			}
		}
	}
	cols := make([]ir.GroupedColumn, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = ir.GroupedColumn{Name: strings.ToLower(c.Name), Type: c.Type}
	}
	var total int64
	for _, g := range t.Groups {
		total += g.Count
	}
	return &Store{table: strings.ToLower(t.Name), unit: unit, columns: cols, groups: t.Groups, model: t.Model, seed: t.Seed, total: total}, nil
}

// Columns lists the grouped columns and the privacy unit.
func (s *Store) Columns(_ context.Context, table string) ([]ir.ColumnInfo, error) {
	if !strings.EqualFold(table, s.table) {
		return nil, fmt.Errorf("planner: table %q is not in the protected database", table)
	}
	cols := []ir.ColumnInfo{{Name: s.unit, Type: ir.TypeInt}}
	for _, c := range s.columns {
		cols = append(cols, ir.ColumnInfo{Name: c.Name, Type: c.Type})
	}
	return cols, nil
}

// CheckUnitKeyed holds: each row is its own unit.
func (s *Store) CheckUnitKeyed(context.Context, *ir.Table) error { return nil }

// Close has nothing to release.
func (s *Store) Close() error { return nil }

// Run answers a COUNT(*) without GROUP BY: the count of the rows the WHERE
// selects, as many units (each row is its own), and their contributor key
// under the key model. Bounded counts are the plain ones: a unit has one row.
func (s *Store) Run(_ context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (*ir.Result, error) {
	_, bounds, _, err := plan.Prepare(t, q, needs, secret)
	if err != nil {
		return nil, err
	}
	if len(q.GroupBy) > 0 || q.Agg != ir.CountRows || q.HasSums() {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "the grouped stand-in answers COUNT(*) without GROUP BY only")
	}
	match, err := s.compile(q.Where)
	if err != nil {
		return nil, err
	}
	res := &ir.Result{Cells: []ir.Cell{s.cell(match)}, DomainComplete: true, Bounds: bounds, Path: ir.PathGrouped}
	if needs.TableSize {
		res.TableSize = s.total
	}
	if needs.Conditions {
		res.Conditions = plan.Conditions(q)
	}
	return res, nil
}

// cell is the planner's cell for the groups a predicate selects: their total
// count and their contributor key under the key model.
func (s *Store) cell(match func(ir.Group) bool) ir.Cell {
	c := ir.Cell{InDomain: true}
	h := fnv.New64a()
	var buf [8]byte
	for i, g := range s.groups {
		if g.Count == 0 || !match(g) {
			continue
		}
		c.Count += g.Count
		c.Units += g.Count
		c.Key += g.Key
		binary.LittleEndian.PutUint64(buf[:], uint64(i))
		h.Write(buf[:])
	}
	if s.model == ir.IndependentKeys && c.Count > 0 {
		c.Key = uint32(splitmix64(h.Sum64() ^ s.seed))
	}
	return c
}

// compile turns a predicate into a test of one group, resolving columns once.
func (s *Store) compile(p ir.Pred) (func(ir.Group) bool, error) {
	switch p := p.(type) {
	case nil:
		return func(ir.Group) bool { return true }, nil
	case *ir.And, *ir.Or:
		var l, r ir.Pred
		if a, ok := p.(*ir.And); ok {
			l, r = a.Left, a.Right
		} else {
			o := p.(*ir.Or)
			l, r = o.Left, o.Right
		}
		lf, err := s.compile(l)
		if err != nil {
			return nil, err
		}
		rf, err := s.compile(r)
		if err != nil {
			return nil, err
		}
		if _, and := p.(*ir.And); and {
			return func(g ir.Group) bool { return lf(g) && rf(g) }, nil
		}
		return func(g ir.Group) bool { return lf(g) || rf(g) }, nil
	case *ir.Not:
		inner, err := s.compile(p.Inner)
		if err != nil {
			return nil, err
		}
		return func(g ir.Group) bool { return !inner(g) }, nil
	case *ir.Compare:
		cmp, err := s.comparer(p.Column, p.Value)
		if err != nil {
			return nil, err
		}
		test, ok := compareOps[p.Op]
		if !ok {
			return nil, fmt.Errorf("unknown comparison %q", p.Op)
		}
		return func(g ir.Group) bool { return test(cmp(g)) }, nil
	case *ir.Between:
		lo, err := s.comparer(p.Column, p.Lo)
		if err != nil {
			return nil, err
		}
		hi, err := s.comparer(p.Column, p.Hi)
		if err != nil {
			return nil, err
		}
		return func(g ir.Group) bool { return (lo(g) >= 0 && hi(g) <= 0) != p.Negate }, nil
	case *ir.In:
		cmps := make([]func(ir.Group) int, len(p.Values))
		for j, lit := range p.Values {
			c, err := s.comparer(p.Column, lit)
			if err != nil {
				return nil, err
			}
			cmps[j] = c
		}
		return func(g ir.Group) bool {
			for _, c := range cmps {
				if c(g) == 0 {
					return !p.Negate
				}
			}
			return p.Negate
		}, nil
	case ir.Derived:
		return s.compile(p.Lower())
	case *ir.IsNull:
		// Grouped columns hold no NULLs.
		if _, err := s.index(p.Column); err != nil {
			return nil, err
		}
		return func(ir.Group) bool { return p.Negate }, nil
	}
	return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "the grouped stand-in does not evaluate %T", p)
}

var compareOps = map[string]func(int) bool{
	"=":  func(c int) bool { return c == 0 },
	"<>": func(c int) bool { return c != 0 },
	"!=": func(c int) bool { return c != 0 },
	"<":  func(c int) bool { return c < 0 },
	"<=": func(c int) bool { return c <= 0 },
	">":  func(c int) bool { return c > 0 },
	">=": func(c int) bool { return c >= 0 },
}

func (s *Store) index(column string) (int, error) {
	i := slices.IndexFunc(s.columns, func(c ir.GroupedColumn) bool { return strings.EqualFold(c.Name, column) })
	if i < 0 {
		return 0, pgerror.Errorf(pgerror.FeatureNotSupported, "column %q is not one the grouped stand-in grouped by", column)
	}
	return i, nil
}

// comparer orders a group's value of column against a literal.
func (s *Store) comparer(column string, lit ir.Literal) (func(ir.Group) int, error) {
	i, err := s.index(column)
	if err != nil {
		return nil, err
	}
	switch {
	case s.columns[i].Type == ir.TypeInt && lit.Kind == ir.LitInt:
		return func(g ir.Group) int { return cmp.Compare(g.Values[i].(int64), lit.Int) }, nil
	case s.columns[i].Type == ir.TypeInt && lit.Kind == ir.LitFloat:
		return func(g ir.Group) int { return cmp.Compare(float64(g.Values[i].(int64)), lit.Float) }, nil
	case s.columns[i].Type == ir.TypeText && lit.Kind == ir.LitText:
		return func(g ir.Group) int { return strings.Compare(g.Values[i].(string), lit.Text) }, nil
	}
	return nil, fmt.Errorf("cannot compare column %q with that literal", column)
}

// splitmix64 is a bijective mixer: distinct sets get unrelated keys.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// FromSQLite groups a protected table's rows by columns, reading the file
// read-only, and sums each group's record keys under secret exactly as the
// planner does for a table with one row per privacy unit: with the
// firewall's secret, the additive model then answers
// as the Engine would.
func FromSQLite(ctx context.Context, path, table, unit string, columns []string, secret []byte) ([]ir.GroupedColumn, []ir.Group, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, nil, fmt.Errorf("opening %s read-only: %w", path, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT "+pglex.QuoteIdentAlways(unit)+", "+quoteAll(columns)+" FROM "+pglex.QuoteIdentAlways(table))
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", table, err)
	}
	defer rows.Close()
	cols := make([]ir.GroupedColumn, len(columns))
	for i, c := range columns {
		cols[i] = ir.GroupedColumn{Name: strings.ToLower(c), Type: ir.TypeInt}
	}
	typed := false
	byKey := map[string]int{}
	var groups []ir.Group
	scan := make([]any, len(columns)+1)
	for rows.Next() {
		vals := make([]any, len(columns)+1)
		for i := range scan {
			scan[i] = &vals[i]
		}
		if err := rows.Scan(scan...); err != nil {
			return nil, nil, err
		}
		gv := make([]any, len(columns))
		for i, v := range vals[1:] {
			switch v := v.(type) {
			case int64:
				gv[i] = v
			case string:
				gv[i] = v
			case []byte:
				gv[i] = string(v)
			case nil:
				return nil, nil, fmt.Errorf("column %q has NULLs, which the grouped stand-in does not model", columns[i])
			default:
				return nil, nil, fmt.Errorf("column %q holds %T values; only integers and text are modelled", columns[i], v)
			}
		}
		if !typed {
			for i, v := range gv {
				if _, ok := v.(string); ok {
					cols[i].Type = ir.TypeText
				}
			}
			typed = true
		}
		for i, v := range gv {
			if _, isText := v.(string); isText != (cols[i].Type == ir.TypeText) {
				return nil, nil, fmt.Errorf("column %q mixes integer and text values", columns[i])
			}
		}
		k := fmt.Sprintf("%#v", gv) // unambiguous: text values are quoted
		gi, ok := byKey[k]
		if !ok {
			gi = len(groups)
			byKey[k] = gi
			groups = append(groups, ir.Group{Values: gv})
		}
		groups[gi].Count++
		groups[gi].Key += plan.RecordKey(secret, vals[0])
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return cols, groups, nil
}

// quoteAll quotes each of names and joins them with commas.
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = pglex.QuoteIdentAlways(n)
	}
	return strings.Join(q, ", ")
}

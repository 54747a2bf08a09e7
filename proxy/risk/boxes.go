package risk

import (
	"iter"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"countwall/proxy/state/release"
)

// A box is a cell read as a value set per column: `age between 30 and 39`,
// `age >= 30 and age <= 39`, `age in (30, ..., 39)` and `age > 29 and age
// < 40` are the same box, and a threshold search's range `col >= u and col <
// v` is a box the search's other ranges add up to. Conditions that are not
// a column compared with constants stay as written (opaque) and are part of
// the box's family.
//
// Each column's values are cut into atoms at the constants the analyst
// compared it with; a box holds, per column it constrains, a set of atoms.
// Integer columns are read as integers: `age <= 39` is `age < 40`. Text
// columns are cut at each constant and just after it (`col = 'F'` is the
// atom from 'F' to the smallest text above it); between two constants the
// analyst named there is taken to be no value (the threshold searches'
// public domain: `marital >= 'married' and marital < 'never_married'` is
// `marital = 'married'`). A constrained column excludes NULL and an
// unconstrained one is taken to hold none either, as the reconstruction
// attack takes it.

// edge is an end of a value range: a constant (integer or text) or, for
// text, the smallest text after one (after: constant + "\x00").
type edge struct {
	num  int64
	text string
}

// constraint is one conjunct read as ranges [lo, hi) of one column; a nil
// lo or hi is open on that side.
type constraint struct {
	col    string
	text   bool
	ranges [][2]*edge
	consts []edge // the constants named
}

// readConstraint reads `col op constant`, `col between a and b`, `col in
// (...)`, `col = a or col = b` and `col is not null`.
func readConstraint(c *release.Conjunct) (constraint, bool) {
	if col, set, ok := valueSet(c); ok {
		out := constraint{col: col}
		for i, v := range set {
			e, text, ok := readEdge(v)
			if !ok || (i > 0 && text != out.text) {
				return constraint{}, false
			}
			out.text = text
			out.ranges = append(out.ranges, [2]*edge{e, after(e, text)})
			out.consts = append(out.consts, *e)
		}
		return out, true
	}
	col := c.Column
	switch {
	case col == "":
		return constraint{}, false
	case c.Op == release.OpIsNotNull:
		return constraint{col: col, ranges: [][2]*edge{{nil, nil}}}, true
	case c.Op == release.OpBetween && len(c.Values) == 2:
		a, ta, ok1 := readEdge(c.Values[0])
		b, tb, ok2 := readEdge(c.Values[1])
		if !ok1 || !ok2 || ta != tb {
			return constraint{}, false
		}
		return constraint{col: col, text: ta, ranges: [][2]*edge{{a, after(b, tb)}}, consts: []edge{*a, *b}}, true
	case len(c.Values) != 1:
		return constraint{}, false
	}
	e, text, ok := readEdge(c.Values[0])
	if !ok {
		return constraint{}, false
	}
	out := constraint{col: col, text: text, consts: []edge{*e}}
	switch c.Op {
	case release.OpLt:
		out.ranges = [][2]*edge{{nil, e}}
	case release.OpLe:
		out.ranges = [][2]*edge{{nil, after(e, text)}}
	case release.OpGt:
		out.ranges = [][2]*edge{{after(e, text), nil}}
	case release.OpGe:
		out.ranges = [][2]*edge{{e, nil}}
	default:
		return constraint{}, false
	}
	return out, true
}

// readEdge reads an integer or a text constant.
func readEdge(v release.Constant) (*edge, bool, bool) {
	if v.String {
		return &edge{text: v.Text}, true, true
	}
	n, err := strconv.ParseInt(v.Text, 10, 64)
	if err != nil || n == math.MaxInt64 {
		return nil, false, false
	}
	return &edge{num: n}, false, true
}

// after is the smallest value above e.
func after(e *edge, text bool) *edge {
	if text {
		return &edge{text: e.text + "\x00"}
	}
	return &edge{num: e.num + 1}
}

func edgeLess(a, b edge, text bool) bool {
	if text {
		return a.text < b.text
	}
	return a.num < b.num
}

// axis is one column's cuts: atom 0 is below cuts[0], atom i is [cuts[i-1],
// cuts[i]), the last atom is from the last cut up.
type axis struct {
	text  bool
	cuts  []edge
	named map[string]bool // text constants the analyst named
	// domain is the atoms of the column's declared domain, nil when it
	// has none (domains.go).
	domain atomSet
}

func (x *axis) atoms() int32 { return int32(len(x.cuts)) + 1 }

// index is the atom that starts at e (the first cut at or above e, plus
// one).
func (x *axis) index(e *edge, open int32) int32 {
	if e == nil {
		return open
	}
	return int32(sort.Search(len(x.cuts), func(i int) bool { return !edgeLess(x.cuts[i], *e, x.text) })) + 1
}

// point says whether atom i holds one value (and which): an integer range
// one wide, or a text constant's atom (up to the next constant named).
func (x *axis) point(i int32) (edge, bool) {
	if i < 1 || int(i) > len(x.cuts) {
		return edge{}, false
	}
	lo := x.cuts[i-1]
	if x.text {
		return lo, x.named[lo.text] && int(i) < len(x.cuts)
	}
	return lo, int(i) < len(x.cuts) && x.cuts[i].num == lo.num+1
}

// space is an analyst's columns, per table, cut at the constants of every
// statement read.
type space struct {
	axes map[column]*axis
	// order is the columns of each table in the order first constrained.
	order map[string][]string
	// read is each conjunct read once: a search repeats its conjuncts
	// across hundreds of thousands of statements.
	read map[string]readConjunct
}

// column is a table's column.
type column struct{ table, name string }

// axis is the cuts of a table's column, nil when it has none.
func (s *space) axis(table, col string) *axis { return s.axes[column{table, col}] }

type readConjunct struct {
	k  constraint
	ok bool
}

// constraint is readConstraint(c), read once per distinct conjunct (by
// its text, which equal conditions share).
func (s *space) constraint(c *release.Conjunct) (constraint, bool) {
	if r, seen := s.read[c.Text]; seen {
		return r.k, r.ok
	}
	k, ok := readConstraint(c)
	s.read[c.Text] = readConjunct{k, ok}
	return k, ok
}

// newSpace cuts every column at the constants of the answers' conjuncts;
// a column compared with both integers and text is left opaque.
func newSpace(as []answer) *space { return newDomainSpace(as, Options{}) }

// newDomainSpace is newSpace with each column's declared domain
// (o.Domains) read as closed at its ends.
func newDomainSpace(as []answer, o Options) *space { return newDomainSpaceOf(slices.Values(as), o) }

// newDomainSpaceOf is newDomainSpace of the answers each gives.
func newDomainSpaceOf(each iter.Seq[answer], o Options) *space {
	s := &space{axes: map[column]*axis{}, order: map[string][]string{}, read: map[string]readConjunct{}}
	edges := map[column][]edge{}
	mixed := map[column]bool{}
	// Each distinct conjunct once: its edges and names are sets.
	type tableConjunct struct{ table, conj string }
	done := map[tableConjunct]bool{}
	for a := range each {
		for _, c := range a.conj {
			if done[tableConjunct{a.table, c.Text}] {
				continue
			}
			done[tableConjunct{a.table, c.Text}] = true
			k, ok := s.constraint(c)
			if !ok || len(k.consts) == 0 {
				continue // IS NOT NULL reads on a column cut elsewhere
			}
			name := column{a.table, k.col}
			x, seen := s.axes[name]
			if !seen {
				x = &axis{text: k.text, named: map[string]bool{}}
				s.axes[name] = x
				s.order[a.table] = append(s.order[a.table], k.col)
			}
			if x.text != k.text {
				mixed[name] = true
			}
			for _, r := range k.ranges {
				for _, e := range r {
					if e != nil {
						edges[name] = append(edges[name], *e)
					}
				}
			}
			for _, e := range k.consts {
				if x.text {
					x.named[e.text] = true
				}
			}
		}
	}
	for name, x := range s.axes {
		if mixed[name] {
			delete(s.axes, name)
			continue
		}
		d := o.domainOf(name.table, name.name)
		if d != nil && d.domainEdges(x.text) != nil {
			edges[name] = append(edges[name], d.domainEdges(x.text)...)
			for _, c := range d.Categories {
				x.named[c] = true
			}
		}
		x.cuts = cutsOf(edges[name], x)
		x.setDomain(d)
	}
	return s
}

// cutsOf sorts a column's edges, once each; on a text column the edge just
// after a constant is dropped when a higher constant was named (no value
// lies between two named constants).
func cutsOf(es []edge, x *axis) []edge {
	sort.Slice(es, func(i, j int) bool { return edgeLess(es[i], es[j], x.text) })
	var out []edge
	for i, e := range es {
		if i > 0 && !edgeLess(es[i-1], e, x.text) {
			continue
		}
		out = append(out, e)
	}
	if !x.text {
		return out
	}
	var highest string
	for v := range x.named {
		highest = max(highest, v)
	}
	kept := out[:0]
	for _, e := range out {
		if v, isAfter := strings.CutSuffix(e.text, "\x00"); isAfter && !x.named[e.text] && v < highest {
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

// atomSet is a sorted list of disjoint atom ranges [a, b).
type atomSet []int32

func (s atomSet) key() string { return string(s.appendKey(nil)) }

func (s atomSet) appendKey(b []byte) []byte {
	for i := 0; i < len(s); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(s[i]), 10)
		b = append(b, '-')
		b = strconv.AppendInt(b, int64(s[i+1]), 10)
	}
	return b
}

// normal merges touching ranges and drops empty ones.
func (s atomSet) normal() atomSet {
	var out atomSet
	for i := 0; i < len(s); i += 2 {
		a, b := s[i], s[i+1]
		if a >= b {
			continue
		}
		if n := len(out); n > 0 && out[n-1] >= a {
			out[n-1] = max(out[n-1], b)
			continue
		}
		out = append(out, a, b)
	}
	return out
}

// intersect is the atoms in both sets.
func (s atomSet) intersect(t atomSet) atomSet {
	var out atomSet
	for i := 0; i < len(s); i += 2 {
		for j := 0; j < len(t); j += 2 {
			if a, b := max(s[i], t[j]), min(s[i+1], t[j+1]); a < b {
				out = append(out, a, b)
			}
		}
	}
	return out.normal()
}

// minus is the atoms of s not in t.
func (s atomSet) minus(t atomSet) atomSet {
	out := append(atomSet(nil), s...)
	for j := 0; j < len(t); j += 2 {
		var next atomSet
		for i := 0; i < len(out); i += 2 {
			a, b := out[i], out[i+1]
			next = append(next, a, min(b, t[j]), max(a, t[j+1]), b)
		}
		out = next.normal()
	}
	return out
}

// covers says whether every atom of t is in s.
func (s atomSet) covers(t atomSet) bool {
	i := 0
	for j := 0; j < len(t); j += 2 {
		for i < len(s) && s[i+1] <= t[j] {
			i += 2
		}
		if i == len(s) || s[i] > t[j] || s[i+1] < t[j+1] {
			return false
		}
	}
	return true
}

// colSet is one constrained column of a box.
type colSet struct {
	col string
	set atomSet
}

// boxOf reads a cell's conjuncts as a box: its family (the table and the
// conditions left as written) and its column sets, by column name.
func (s *space) boxOf(table string, conj []*release.Conjunct) (family string, cols []colSet) {
	var opaque []string
	cols = make([]colSet, 0, len(conj))
	for _, c := range conj {
		k, ok := s.constraint(c)
		x := s.axis(table, k.col)
		if !ok || x == nil {
			opaque = append(opaque, c.Text)
			continue
		}
		var set atomSet
		for _, r := range k.ranges {
			set = append(set, x.index(r[0], 0), x.index(r[1], x.atoms()))
		}
		set = x.closed(set.normal())
		if i := slices.IndexFunc(cols, func(c colSet) bool { return c.col == k.col }); i >= 0 {
			cols[i].set = cols[i].set.intersect(set)
			continue
		}
		cols = append(cols, colSet{col: k.col, set: set})
	}
	sort.Slice(cols, func(i, j int) bool { return cols[i].col < cols[j].col })
	return cellKey(table, opaque), slices.Clip(cols)
}

func colsKey(family string, cols []colSet) string {
	var b strings.Builder
	b.WriteString(family)
	for _, c := range cols {
		b.WriteString(" |")
		b.WriteString(c.col)
		b.WriteByte(':')
		b.WriteString(c.set.key())
	}
	return b.String()
}

// render writes a column set as conditions: a point as `col = v`, a range
// of atoms as `col >= u and col < v`, several as ORed ranges.
func (s *space) render(table string, c colSet) []*release.Conjunct {
	x := s.axis(table, c.col)
	lit := func(e edge) release.Constant {
		if x.text {
			return release.Constant{Text: e.text, String: true}
		}
		return release.Constant{Text: strconv.FormatInt(e.num, 10)}
	}
	// A text cut just after a constant v reads as > v from below, <= v
	// from above.
	from := func(e edge) release.Conjunct {
		if v, isAfter := strings.CutSuffix(e.text, "\x00"); x.text && isAfter {
			return release.Compare(c.col, release.OpGt, lit(edge{text: v}))
		}
		return release.Compare(c.col, release.OpGe, lit(e))
	}
	below := func(e edge) release.Conjunct {
		if v, isAfter := strings.CutSuffix(e.text, "\x00"); x.text && isAfter {
			return release.Compare(c.col, release.OpLe, lit(edge{text: v}))
		}
		return release.Compare(c.col, release.OpLt, lit(e))
	}
	var parts [][]release.Conjunct
	for i := 0; i < len(c.set); i += 2 {
		a, b := c.set[i], c.set[i+1]
		if v, ok := x.point(a); ok && b == a+1 {
			parts = append(parts, []release.Conjunct{release.Compare(c.col, release.OpEq, lit(v))})
			continue
		}
		var p []release.Conjunct
		if a > 0 {
			p = append(p, from(x.cuts[a-1]))
		}
		if b < x.atoms() {
			p = append(p, below(x.cuts[b-1]))
		}
		if len(p) == 0 {
			p = append(p, release.IsNull(c.col, true))
		}
		parts = append(parts, p)
	}
	if len(parts) == 1 {
		out := make([]*release.Conjunct, len(parts[0]))
		for i := range parts[0] {
			out[i] = &parts[0][i]
		}
		return out
	}
	alternatives := make([]release.Conjunct, len(parts))
	for i, p := range parts {
		alternatives[i] = p[0]
		if len(p) > 1 {
			alternatives[i] = release.And(p)
		}
	}
	or := release.Or(alternatives)
	return []*release.Conjunct{&or}
}

// columns is how many columns of a table the analyst's constants cut.
func (s *space) columns(table string) int {
	n := 0
	for _, col := range s.order[table] {
		if s.axis(table, col) != nil {
			n++
		}
	}
	return n
}

// renderRow writes a box's column sets in the order the analyst first
// constrained the columns.
func (s *space) renderRow(table string, cols []colSet) []*release.Conjunct {
	rank := map[string]int{}
	for i, col := range s.order[table] {
		rank[col] = i
	}
	sorted := append([]colSet(nil), cols...)
	sort.SliceStable(sorted, func(i, j int) bool { return rank[sorted[i].col] < rank[sorted[j].col] })
	var out []*release.Conjunct
	for _, c := range sorted {
		out = append(out, s.render(table, c)...)
	}
	return out
}

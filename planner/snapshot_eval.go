package planner

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// snapEval evaluates a predicate over a snapshot with SQL's three-valued
// logic: each node yields the rows where it is true and the rows where it is
// false; the rest are unknown. ok is false when some part of the predicate is
// one the snapshot declines to answer (the caller then asks SQLite).
type snapEval struct {
	snap *tableSnapshot
	all  bitset // every row
}

func newSnapEval(snap *tableSnapshot) *snapEval {
	all := newBitset(snap.rows)
	for i := range all {
		all[i] = math.MaxUint64
	}
	if r := snap.rows & 63; r != 0 {
		all[len(all)-1] = 1<<uint(r) - 1
	}
	return &snapEval{snap: snap, all: all}
}

func (e *snapEval) pred(p Pred) (t, f bitset, ok bool) {
	switch p := p.(type) {
	case *And:
		lt, lf, ok1 := e.pred(p.Left)
		rt, rf, ok2 := e.pred(p.Right)
		if !ok1 || !ok2 {
			return nil, nil, false
		}
		for i := range lt {
			lt[i] &= rt[i]
			lf[i] |= rf[i]
		}
		return lt, lf, true
	case *Or:
		lt, lf, ok1 := e.pred(p.Left)
		rt, rf, ok2 := e.pred(p.Right)
		if !ok1 || !ok2 {
			return nil, nil, false
		}
		for i := range lt {
			lt[i] |= rt[i]
			lf[i] &= rf[i]
		}
		return lt, lf, true
	case *Not:
		it, inf, ok := e.pred(p.Inner)
		return inf, it, ok
	case *IsNull:
		c := e.column(p.Column)
		if c == nil {
			return nil, nil, false
		}
		t, f = make(bitset, len(e.all)), make(bitset, len(e.all))
		for i := range t {
			t[i] = c.nulls[i]
			f[i] = e.all[i] &^ c.nulls[i]
		}
		if p.Negate {
			t, f = f, t
		}
		return t, f, true
	case *Compare:
		return e.leaf(p.Column, false, func(c *snapColumn) ([]uint64, bool) {
			lit, ok := literalFor(c, p.Value)
			if !ok {
				return nil, false
			}
			return c.lut(func(v dictValue) bool { return opHolds(p.Op, compareLiteral(v, lit)) })
		})
	case *Between:
		return e.leaf(p.Column, p.Negate, func(c *snapColumn) ([]uint64, bool) {
			lo, ok1 := literalFor(c, p.Lo)
			hi, ok2 := literalFor(c, p.Hi)
			if !ok1 || !ok2 {
				return nil, false
			}
			return c.lut(func(v dictValue) bool { return compareLiteral(v, lo) >= 0 && compareLiteral(v, hi) <= 0 })
		})
	case *In:
		if len(p.Values) == 0 {
			return nil, nil, false
		}
		return e.leaf(p.Column, p.Negate, func(c *snapColumn) ([]uint64, bool) {
			lits := make([]dictValue, len(p.Values))
			for i, l := range p.Values {
				var ok bool
				if lits[i], ok = literalFor(c, l); !ok {
					return nil, false
				}
			}
			return c.lut(func(v dictValue) bool {
				for _, l := range lits {
					if compareLiteral(v, l) == 0 {
						return true
					}
				}
				return false
			})
		})
	case *Like:
		return e.leaf(p.Column, p.Negate, func(c *snapColumn) ([]uint64, bool) {
			// Reals and blobs turn into text by SQLite's own rules, and
			// invalid UTF-8 is read by its own decoder: those stay in SQLite.
			if c.has[classReal] || c.has[classBlob] || !c.validUTF8 || !utf8.ValidString(p.Pattern) {
				return nil, false
			}
			return c.lut(func(v dictValue) bool {
				if v.class == classInt {
					return likeMatches(strconv.FormatInt(v.i, 10), p.Pattern)
				}
				return likeMatches(v.s, p.Pattern)
			})
		})
	}
	// MathCompare and anything new run in SQLite.
	return nil, nil, false
}

func (e *snapEval) column(name string) *snapColumn {
	return e.snap.columns[strings.ToLower(name)]
}

// leaf evaluates a column condition that is unknown exactly where the column
// is NULL (every literal is non-NULL): build says, per distinct value, whether
// the condition holds, and the rows follow from their codes.
func (e *snapEval) leaf(column string, negate bool, build func(*snapColumn) ([]uint64, bool)) (t, f bitset, ok bool) {
	c := e.column(column)
	if c == nil {
		return nil, nil, false
	}
	lut, ok := build(c)
	if !ok {
		return nil, nil, false
	}
	t = make(bitset, len(e.all))
	switch {
	case c.codes8 != nil:
		fillMatches(t, c.codes8, lut)
	case c.codes16 != nil:
		fillMatches(t, c.codes16, lut)
	default:
		fillMatches(t, c.codes32, lut)
	}
	f = make(bitset, len(e.all))
	for i := range f {
		f[i] = e.all[i] &^ t[i] &^ c.nulls[i]
	}
	if negate {
		t, f = f, t
	}
	return t, f, true
}

// fillMatches sets the rows whose code the lookup table marks, a word of
// 64 rows at a time without a branch per row.
func fillMatches[C uint8 | uint16 | uint32](t bitset, codes []C, lut []uint64) {
	for wi := range t {
		base := wi << 6
		chunk := codes[base:min(base+64, len(codes))]
		var w uint64
		for j, code := range chunk {
			w |= lut[code] << uint(j)
		}
		t[wi] = w
	}
}

// lut evaluates holds on every distinct non-NULL value: 1 where it holds.
func (c *snapColumn) lut(holds func(dictValue) bool) ([]uint64, bool) {
	out := make([]uint64, len(c.values))
	for i, v := range c.values {
		if v.class != classNull && holds(v) {
			out[i] = 1
		}
	}
	return out, true
}

// literalFor converts a literal to the value SQLite compares the column's
// values with. Only the pairs where SQLite applies no conversion to the
// literal are accepted: a number against a column of numeric affinity, text
// against a column of text or no affinity. Elsewhere SQLite's conversions
// decide, so SQLite answers. A numeric column holding text that reads as a
// number is declined too, since SQLite converts such text when comparing.
func literalFor(c *snapColumn, l Literal) (dictValue, bool) {
	switch {
	case c.affinity == affinityNumeric && l.Kind == LitInt:
		return dictValue{class: classInt, i: l.Int}, !c.numText
	case c.affinity == affinityNumeric && l.Kind == LitFloat:
		if math.IsNaN(l.Float) {
			return dictValue{}, false
		}
		return dictValue{class: classReal, f: l.Float}, !c.numText
	case c.affinity != affinityNumeric && l.Kind == LitText:
		return dictValue{class: classText, s: l.Text}, true
	}
	return dictValue{}, false
}

// numericText reports whether a column holds text that could read as a
// number. Such text cannot normally be stored in a column of numeric
// affinity (SQLite converts it on insert), so this is almost always false.
func (c *snapColumn) numericText() bool {
	if !c.has[classText] {
		return false
	}
	for _, v := range c.values {
		if v.class != classText {
			continue
		}
		s := strings.TrimSpace(v.s)
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return true
		}
		if strings.HasPrefix(strings.ToLower(strings.TrimLeft(s, "+-")), "0x") {
			return true
		}
	}
	return false
}

// compareLiteral compares a non-NULL stored value with a literal by SQLite's
// rules for operands of different classes: numbers < text < blobs.
func compareLiteral(v, lit dictValue) int {
	return compareDict(v, lit)
}

func opHolds(op string, c int) bool {
	switch op {
	case "=":
		return c == 0
	case "<>", "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

// likeMatches is SQLite's LIKE with case_sensitive_like on and ESCAPE '\':
// '%' matches any run of characters, '_' exactly one (UTF-8) character, a
// backslash makes the next character literal, and a pattern ending in a lone
// backslash matches nothing.
func likeMatches(s, p string) bool {
	for len(p) > 0 {
		pr, pn := utf8.DecodeRuneInString(p)
		switch pr {
		case '%':
			for len(p) > 0 && (p[0] == '%' || p[0] == '_') {
				if p[0] == '_' {
					if len(s) == 0 {
						return false
					}
					_, sn := utf8.DecodeRuneInString(s)
					s = s[sn:]
				}
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for {
				if likeMatches(s, p) {
					return true
				}
				if len(s) == 0 {
					return false
				}
				_, sn := utf8.DecodeRuneInString(s)
				s = s[sn:]
			}
		case '_':
			if len(s) == 0 {
				return false
			}
			_, sn := utf8.DecodeRuneInString(s)
			s, p = s[sn:], p[pn:]
		case '\\':
			p = p[pn:]
			if len(p) == 0 {
				return false
			}
			pr, pn = utf8.DecodeRuneInString(p)
			fallthrough
		default:
			sr, sn := utf8.DecodeRuneInString(s)
			if len(s) == 0 || sr != pr {
				return false
			}
			s, p = s[sn:], p[pn:]
		}
	}
	return len(s) == 0
}

package risk

import (
	"sort"
	"strconv"
	"strings"

	"countwall/proxy/state/release"
)

// answer is one released answer read back from the audit: the cell it
// counts, how it was asked and the value sent.
type answer struct {
	id        int64
	analyst   string
	mechanism string
	epsilon   float64
	table     string
	shape     string   // the statement's shape, for telling a search from a one-off
	conj      []string // the WHERE clause's conjuncts, constants filled in
	// threshold is set for COUNT(*) > b and COUNT(*) >= b.
	threshold *threshold
	value     float64
	// exact says the value is the true count (or the true 0/1 of a
	// threshold): the mechanism adds no noise, or it answered without noise
	// (idp and bdp send an integral value exactly when the local
	// sensitivity is 0; their noisy answers are never integral).
	exact bool
}

type threshold struct {
	atLeast int64 // the answer 1 means count >= atLeast
}

// key is the cell an answer counts: its table and its conjuncts, sorted.
// It is made when asked, not kept: a long history's keys, one per answer,
// would outweigh the rest of it.
func (a answer) key() string { return cellKey(a.table, a.conj) }

func cellKey(table string, conj []string) string {
	c := append([]string(nil), conj...)
	sort.Strings(c)
	return table + " where " + strings.Join(c, " and ")
}

// cellText is a cell's predicate as the owner reads it.
func cellText(table string, conj []string) string {
	if len(conj) == 0 {
		return "all rows of " + table
	}
	c := append([]string(nil), conj...)
	sort.Strings(c)
	return table + ": " + strings.Join(c, " and ")
}

// parsed is a statement split into the parts the solvers use.
type parsed struct {
	table     string
	conj      []string
	groupBy   []string
	threshold *threshold
}

// shapeParts is a statement shape split once into what parse fills in:
// the conjuncts keep their $n until each statement's constants fill them.
type shapeParts struct {
	ok           bool
	table        string
	groupBy      []string
	conj         []string
	thresholdRef string // the $n of COUNT(*) > $n, when a threshold
	inclusive    bool   // >= rather than >
}

// parse reads an answered COUNT statement from its shape and constants.
// It returns false for anything else (SET, SHOW, a shape it does not know).
func parse(r release.Release) (parsed, bool) { return parseWith(nil, r) }

// parseWith is parse with the shapes already split (attack streams repeat
// a few shapes hundreds of thousands of times); cache may be nil.
func parseWith(cache map[string]shapeParts, r release.Release) (parsed, bool) {
	sp, seen := cache[r.Shape]
	if !seen {
		sp = parseShape(r.Shape)
		if cache != nil {
			cache[r.Shape] = sp
		}
	}
	if !sp.ok {
		return parsed{}, false
	}
	p := parsed{table: sp.table, groupBy: sp.groupBy}
	if sp.thresholdRef != "" {
		b, ok := constantInt(sp.thresholdRef, r.Constants)
		if !ok {
			return parsed{}, false
		}
		if !sp.inclusive {
			b++
		}
		p.threshold = &threshold{atLeast: b}
	}
	for _, c := range sp.conj {
		p.conj = append(p.conj, fill(c, r.Constants))
	}
	return p, true
}

func parseShape(s string) shapeParts {
	var sp shapeParts
	if !strings.HasPrefix(s, "select ") {
		return sp
	}
	from := topLevel(s, " from ")
	if from < 0 {
		return sp
	}
	selectList, rest := s[len("select "):from], s[from+len(" from "):]
	if i := topLevel(rest, " order by "); i >= 0 {
		rest = rest[:i]
	}
	if i := topLevel(rest, " group by "); i >= 0 {
		for _, g := range strings.Split(rest[i+len(" group by "):], ",") {
			sp.groupBy = append(sp.groupBy, strings.TrimSpace(g))
		}
		rest = rest[:i]
	}
	where := ""
	if i := topLevel(rest, " where "); i >= 0 {
		where, rest = rest[i+len(" where "):], rest[:i]
	}
	sp.table = strings.TrimSpace(rest)
	items := strings.Split(selectList, ", ")
	agg := items[len(items)-1]
	if len(items)-1 != len(sp.groupBy) {
		return shapeParts{}
	}
	switch {
	case agg == "count(*)" || agg == "count(1)" || strings.HasPrefix(agg, "count(distinct "):
	case strings.HasPrefix(agg, "count(*) > $") || strings.HasPrefix(agg, "count(*) >= $"):
		f := strings.Fields(agg)
		sp.thresholdRef, sp.inclusive = f[2], f[1] == ">="
	default:
		return shapeParts{}
	}
	sp.conj = conjuncts(where)
	sp.ok = true
	return sp
}

// topLevel is the index of sep in s outside parentheses, or -1.
func topLevel(s, sep string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth == 0 && strings.HasPrefix(s[i:], sep) {
			return i
		}
	}
	return -1
}

// conjuncts splits a WHERE shape at its top-level ANDs (not a BETWEEN's),
// flattening parenthesised conjunctions.
func conjuncts(where string) []string {
	where = strings.TrimSpace(where)
	if where == "" {
		return nil
	}
	var out []string
	depth, start, between := 0, 0, false
	for i := 0; i < len(where); i++ {
		switch where[i] {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth != 0 {
			continue
		}
		if strings.HasPrefix(where[i:], " between ") {
			between = true
		}
		if strings.HasPrefix(where[i:], " and ") {
			if between {
				between = false
				continue
			}
			out = append(out, flatten(where[start:i])...)
			start = i + len(" and ")
		}
	}
	return append(out, flatten(where[start:])...)
}

// flatten opens a parenthesised conjunction; anything else is one conjunct.
func flatten(c string) []string {
	c = strings.TrimSpace(c)
	if inner, ok := enclosed(c); ok {
		if parts := conjuncts(inner); len(parts) > 1 {
			return parts
		}
		return []string{strings.TrimSpace(inner)}
	}
	return []string{c}
}

// enclosed strips one pair of parentheses that encloses all of s.
func enclosed(s string) (string, bool) {
	if !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		return "", false
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && i != len(s)-1 {
				return "", false
			}
		}
	}
	return s[1 : len(s)-1], true
}

// fill puts a shape's constants back.
func fill(shape string, consts []release.Constant) string {
	return release.Release{Shape: shape, Constants: consts}.Statement()
}

func constantInt(ref string, consts []release.Constant) (int64, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(ref, "$"))
	if err != nil || n < 1 || n > len(consts) || consts[n-1].String {
		return 0, false
	}
	v, err := strconv.ParseInt(consts[n-1].Text, 10, 64)
	return v, err == nil
}

// answers turns releases into one answer per released cell: a GROUP BY
// row counts its cell with the group's values as equalities.
func answers(rs []release.Release) []answer {
	rd := newReader()
	var out []answer
	for i := range rs {
		out = rd.appendAnswers(out, &rs[i])
	}
	return out
}

// reader turns releases into answers. A long history repeats a few
// shapes, analysts and mechanisms and, within a search, the same
// conjuncts hundreds of thousands of times: each such string is kept once
// (interned), and each shape is split once.
type reader struct {
	shapes map[string]shapeParts
	in     interner
}

func newReader() *reader { return &reader{shapes: map[string]shapeParts{}, in: interner{}} }

// appendAnswers appends r's answers to out.
func (rd *reader) appendAnswers(out []answer, r *release.Release) []answer {
	if !r.Answered() || r.Kind != "query" {
		return out
	}
	p, ok := parseWith(rd.shapes, *r)
	if !ok {
		return out
	}
	in := rd.in
	for i, c := range p.conj {
		p.conj[i] = in.of(c)
	}
	for _, c := range r.Cells {
		a := answer{id: r.ID, analyst: in.of(r.Analyst), mechanism: in.of(r.Mechanism), epsilon: r.Epsilon, table: in.of(p.table),
			shape: in.of(r.Shape), conj: p.conj, threshold: p.threshold, value: c.Value, exact: isExact(r.Mechanism, p.threshold != nil, c)}
		if len(p.groupBy) > 0 {
			if len(c.Group) != len(p.groupBy) {
				continue
			}
			a.conj = append(append(make([]string, 0, len(p.conj)+len(p.groupBy)), p.conj...), groupConjuncts(p.groupBy, c.Group)...)
			for i := len(p.conj); i < len(a.conj); i++ {
				a.conj[i] = in.of(a.conj[i])
			}
		}
		out = append(out, a)
	}
	return out
}

// interner keeps one copy of each string it is given.
type interner map[string]string

func (in interner) of(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	in[s] = s
	return s
}

func groupConjuncts(cols []string, vals []release.Datum) []string {
	out := make([]string, len(cols))
	for i, col := range cols {
		switch {
		case vals[i].Null:
			out[i] = col + " is null"
		case isNumber(vals[i].Text):
			out[i] = col + " = " + vals[i].Text
		default:
			out[i] = col + " = " + release.Constant{Text: vals[i].Text, String: true}.SQL()
		}
	}
	return out
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && s != "" && !strings.ContainsAny(s, "eEinIN")
}

// isExact says whether a released value is the true one. Under idp and
// bdp a noisy answer may be integral (the secure noise is drawn on a grid
// that, at the tiny epsilons these attacks ask for, is coarser than 1), so
// only the values an exact answer can take are read as exact: 0 or 1 for a
// threshold, 0 for a plain count (the count of nobody, which bdp answers
// exactly; a count of everyone is left aside).
func isExact(mechanism string, threshold bool, c release.Cell) bool {
	switch mechanism {
	case "exact":
		return true
	case "suppress":
		return !c.Suppressed && c.Value > 0
	case "idp", "bdp":
		if threshold {
			return c.Value == 0 || c.Value == 1
		}
		return c.Value == 0
	}
	return false
}

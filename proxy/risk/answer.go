package risk

import (
	"encoding/binary"
	"slices"
	"sort"
	"strconv"
	"strings"

	"countwall/proxy/state/release"
)

// answer is one released answer read back from the audit: the cell it
// counts, how it was asked and the value sent. What a statement shares
// with the others of its shape is its kind, held once: a long history
// holds millions of answers.
type answer struct {
	id int64
	*kind
	// conj are the cell's conditions: the WHERE clause's conjuncts and,
	// for a GROUP BY row, the group's values as equalities.
	conj  []*release.Conjunct
	value float64
	// exact says the value is the true count (or the true 0/1 of a
	// threshold): the mechanism adds no noise, or it answered without noise
	// (idp and bdp send an integral value exactly when the local
	// sensitivity is 0; their noisy answers are never integral).
	exact bool
}

// kind is how a statement was asked: by which mechanism, at which epsilon,
// of which table, its shape (for telling a search from a one-off) and its
// threshold.
type kind struct {
	mechanism string
	epsilon   float64
	table     string
	shape     string
	// threshold is set for COUNT(*) > b and COUNT(*) >= b.
	threshold *threshold
}

type threshold struct {
	atLeast int64 // the answer 1 means count >= atLeast
}

// key is the cell an answer counts: its table and its conditions' texts,
// sorted. It is made when asked, not kept: a long history's keys, one per
// answer, would outweigh the rest of it.
func (a answer) key() string { return keyOf(a.table, a.conj) }

// keyOf is the key of the cell of table's rows that satisfy every one of
// conj.
func keyOf(table string, conj []*release.Conjunct) string { return cellKey(table, texts(conj)) }

func cellKey(table string, conj []string) string {
	c := append([]string(nil), conj...)
	sort.Strings(c)
	return table + " where " + strings.Join(c, " and ")
}

// texts are the conditions as SQL, the way a finding's cell shows them.
func texts(conj []*release.Conjunct) []string {
	out := make([]string, len(conj))
	for i, c := range conj {
		out[i] = c.Text
	}
	return out
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
// conditions hundreds of thousands of times: each such string and each
// condition is kept once (interned).
type reader struct {
	in    interner
	conds map[string]*release.Conjunct // by Text
	kinds map[kindKey]*kind
}

func newReader() *reader {
	return &reader{in: interner{}, conds: map[string]*release.Conjunct{}, kinds: map[kindKey]*kind{}}
}

// appendAnswers appends r's answers to out. A statement without its
// structured record (a refusal, a row written before the audit kept it)
// gives none.
func (rd *reader) appendAnswers(out []answer, r *release.Release) []answer {
	q := r.Query
	// A statement with sums gives its counts when it selects COUNT(*) (the
	// cell's Value), and its sums to appendSums.
	if !r.Answered() || q == nil || len(q.Aggregates) > 0 && !selectsCount(q) {
		return out
	}
	k := rd.kindOf(r)
	conj := rd.conditions(make([]*release.Conjunct, 0, conditionCount(q.Where)), q.Where)
	for _, c := range r.Cells {
		a := answer{id: r.ID, kind: k, conj: conj, value: c.Value, exact: isExact(r.Mechanism, k.threshold != nil, c)}
		if len(q.GroupBy) > 0 {
			if len(c.Group) != len(q.GroupBy) {
				continue
			}
			a.conj = append(make([]*release.Conjunct, 0, len(conj)+len(q.GroupBy)), conj...)
			for i, col := range q.GroupBy {
				a.conj = append(a.conj, rd.intern(groupCondition(col, c.Group[i])))
			}
		}
		out = append(out, a)
	}
	return out
}

// kindKey is what makes a statement's kind.
type kindKey struct {
	mechanism, table, shape string
	epsilon                 float64
	threshold               bool
	atLeast                 int64
}

// kindOf is the one copy of r's kind.
func (rd *reader) kindOf(r *release.Release) *kind {
	q := r.Query
	key := kindKey{mechanism: r.Mechanism, table: q.Table, shape: r.Shape, epsilon: r.Epsilon}
	if q.AtLeast != nil {
		key.threshold, key.atLeast = true, *q.AtLeast
	}
	if k, ok := rd.kinds[key]; ok {
		return k
	}
	in := rd.in
	k := &kind{mechanism: in.of(r.Mechanism), epsilon: r.Epsilon, table: in.of(q.Table), shape: in.of(r.Shape)}
	if key.threshold {
		k.threshold = &threshold{atLeast: key.atLeast}
	}
	key.mechanism, key.table, key.shape = k.mechanism, k.table, k.shape
	rd.kinds[key] = k
	return k
}

// conditionCount is how many conditions conditions makes of cs.
func conditionCount(cs []release.Conjunct) int {
	n := 0
	for _, c := range cs {
		if c.Op == release.OpAnd {
			n += conditionCount(c.Inner)
			continue
		}
		n++
	}
	return n
}

// selectsCount says whether a statement with sums selects COUNT(*) too.
func selectsCount(q *release.Query) bool {
	for _, a := range q.Aggregates {
		if a.Func == "count" {
			return true
		}
	}
	return false
}

// conditions appends the conjuncts of cs to out, interned, opening a
// conjunction nested in them: (a and b) and c is a, b and c.
func (rd *reader) conditions(out []*release.Conjunct, cs []release.Conjunct) []*release.Conjunct {
	for _, c := range cs {
		if c.Op == release.OpAnd {
			out = rd.conditions(out, c.Inner)
			continue
		}
		out = append(out, rd.intern(c))
	}
	return out
}

// intern is the one copy of a condition of c's text.
func (rd *reader) intern(c release.Conjunct) *release.Conjunct {
	if p, ok := rd.conds[c.Text]; ok {
		return p
	}
	p := &c
	rd.conds[c.Text] = p
	return p
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

// groupCondition is a GROUP BY row's value of col as a condition.
func groupCondition(col string, v release.Datum) release.Conjunct {
	if v.Null {
		return release.IsNull(col, false)
	}
	return release.Compare(col, release.OpEq, ConstantOf(v.Text))
}

// ConstantOf is a released value as a constant: a number when it reads as
// one, else a string.
func ConstantOf(text string) release.Constant {
	return release.Constant{Text: text, String: !isNumber(text)}
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

// cellKeys make cells' keys as keyOf tells them apart, but short: each
// condition is a number given per text, so a cell of 17 conditions is
// keyed in about 40 bytes instead of its 300 bytes of SQL. A solver that
// keys every answer's cell holds one key per cell asked.
type cellKeys struct {
	byPtr  map[*release.Conjunct]uint32
	byText map[string]uint32
	ids    []uint32
	buf    []byte
}

func newCellKeys() *cellKeys {
	return &cellKeys{byPtr: map[*release.Conjunct]uint32{}, byText: map[string]uint32{}}
}

// of is the key of the cell of table's rows that satisfy every one of
// conj: the same for the same table and the same condition texts, in any
// order, as keyOf's.
func (k *cellKeys) of(table string, conj []*release.Conjunct) string {
	ids := k.ids[:0]
	for _, c := range conj {
		ids = append(ids, k.id(c))
	}
	slices.Sort(ids)
	b := binary.AppendUvarint(k.buf[:0], uint64(len(table)))
	b = append(b, table...)
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id))
	}
	k.ids, k.buf = ids, b
	return string(b)
}

// id is the number of c's text: conditions are mostly interned, so found
// by pointer, but a condition made by a solver (a complement) or read from
// a published release is found by its text.
func (k *cellKeys) id(c *release.Conjunct) uint32 {
	if id, ok := k.byPtr[c]; ok {
		return id
	}
	id, ok := k.byText[c.Text]
	if !ok {
		id = uint32(len(k.byText))
		k.byText[c.Text] = id
	}
	k.byPtr[c] = id
	return id
}

package audit

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"countwall/config"
	"countwall/dataset"
	"countwall/pglex"
)

// The deployed audit's neighbours sit at the edges the firewall itself
// has, where one person could change how a statement is answered rather
// than what it answers: the storage classes a backend may read or leave to
// another (a value stored as invalid UTF-8, as a blob, a real or text in an
// integer column, a real unit), the row counts at which an evaluation way
// gives way to another, an expression that fails for one value, and the
// number of groups a GROUP BY may find. Each edge has its own statements,
// each scored by its answer, by its SQLSTATE and by its time.

// edge is one neighbouring pair and the tests run on it.
type edge struct {
	name  string // the neighbour, as results name it: "laplace (blob)"
	kind  dataset.NeighbourKind
	spec  dataset.NeighbourSpec
	tests []Distinguisher
	// trials, when set, is every test's samples per world here, timed
	// tests included (a GROUP BY finding a million groups is slow).
	trials int
	// same writes the world without the person as both worlds: the
	// control, whose tests can only show the two deployments' difference.
	same bool
}

// edgeInputs is what the edges are placed from: the audited table and
// person, and what the audit read of the table's other rows.
type edgeInputs struct {
	table     string
	tc        config.Table
	unit      any
	person    map[string]any
	cols      []string // the columns the cell's tests aim with
	cellCount int64
	facts     []dataset.ColumnFacts
	rows      int64 // the other rows
	// groupLimit is how many distinct values the group edge's column
	// holds without the person (no group edge when 0), groupTrials its
	// samples per world.
	groupLimit  int64
	groupTrials int
	// switchRows are counts of holders to audit besides the switch points
	// switchPoints finds.
	switchRows []int64
}

// deployedEdges are the edges the table and person allow, with notes on
// those they do not.
func deployedEdges(in edgeInputs) ([]edge, []string) {
	var out []edge
	var notes []string
	base := dataset.NeighbourSpec{Table: in.table, Unit: in.tc.PrivacyUnit, Value: in.unit}
	cellTests, storage := deployedTests(in.table, in.tc, in.person, in.cols, in.cellCount)
	out = append(out,
		edge{name: "control", kind: dataset.RemovedUnit, spec: base, tests: cellTests, same: true},
		edge{name: string(dataset.RemovedUnit), kind: dataset.RemovedUnit, spec: base, tests: cellTests})
	notes = append(notes, "control: both worlds are the table without the person, each deployed apart: whatever a test shows there is the deployments' own difference, the floor of the others")
	if in.tc.UnitKeyed {
		notes = append(notes, "several-rows: skipped: the table is declared unit_keyed, so the firewall refuses to start on a table where a unit has several rows")
	} else {
		out = append(out, edge{name: string(dataset.SeveralRows), kind: dataset.SeveralRows, spec: base, tests: cellTests})
	}
	if storage == "" {
		notes = append(notes, "other-storage: skipped: the audited person has no text value in the queried columns")
	} else {
		spec := base
		spec.Column = storage
		out = append(out, edge{name: string(dataset.OtherStorage), kind: dataset.OtherStorage, spec: spec, tests: cellTests})
	}
	added := func(name string, set map[string]string, tests []Distinguisher) edge {
		spec := base
		spec.Set = set
		return edge{name: name, kind: dataset.Added, spec: spec, tests: tests}
	}

	// A text value stored as invalid UTF-8 or as a blob: what a LIKE, an
	// equality and a GROUP BY on that column do.
	if t := in.textColumn(); t == "" {
		notes = append(notes, "invalid-utf8, blob: skipped: the audited person holds no text in a queryable column")
	} else {
		tests := in.textTests(t)
		c := pglex.QuoteIdentAlways(t)
		out = append(out,
			added("invalid-utf8", map[string]string{t: "CAST(CAST(" + c + " AS BLOB) || X'FF' AS TEXT)"}, tests),
			added("blob", map[string]string{t: "CAST(" + c + " AS BLOB)"}, tests))
	}
	// A real or text in an integer column: an equality and a GROUP BY.
	ic := in.integerColumn()
	if ic == "" {
		notes = append(notes, "real-in-integer, text-in-integer, math, switch: skipped: the audited person holds no integer in a queryable column of INTEGER affinity")
	} else {
		tests := in.integerTests(ic)
		out = append(out,
			added("real-in-integer", map[string]string{ic: pglex.QuoteIdentAlways(ic) + " + 0.5"}, tests),
			// 'NaN' stays text in an INTEGER column, and Go reads it as a
			// number.
			added("text-in-integer", map[string]string{ic: "'NaN'"}, tests))
	}
	// The unit stored as a real: whether each unit's rows are one group.
	if u := in.tc.PrivacyUnit; in.fact(u).Integer {
		if _, isInt := in.unit.(int64); isInt {
			out = append(out, added("real-unit", map[string]string{u: pglex.QuoteIdentAlways(u) + " + 0.5"}, cellTests))
		}
	}
	if ic != "" {
		sw, n := in.switchEdges(ic, base)
		out, notes = append(out, sw...), append(notes, n...)
		if in.tc.Policy.AllowMath {
			out = append(out, in.mathEdge(ic, base))
		} else {
			notes = append(notes, "math: skipped: the config does not allow math")
		}
	}
	if in.groupLimit > 0 {
		if g, ok := in.groupEdge(base); ok {
			out = append(out, g)
		} else {
			notes = append(notes, "groups: skipped: no queryable column without a declared domain to GROUP BY")
		}
	}
	return out, notes
}

func (in edgeInputs) fact(column string) dataset.ColumnFacts {
	for _, f := range in.facts {
		if f.Name == column {
			return f
		}
	}
	return dataset.ColumnFacts{}
}

// queryable reports whether the config lets an analyst name a column.
func (in edgeInputs) queryable(column string) bool {
	return column != in.tc.PrivacyUnit && (len(in.tc.Columns) == 0 || slices.Contains(in.tc.Columns, column))
}

// textColumn is the column whose text the storage edges change: the first
// of the cell's columns holding text for the person, else the first other.
func (in edgeInputs) textColumn() string {
	for _, c := range in.candidates() {
		if _, ok := in.person[c].(string); ok {
			return c
		}
	}
	return ""
}

// integerColumn is the column of INTEGER affinity whose value the integer
// edges change, chosen as textColumn is.
func (in edgeInputs) integerColumn() string {
	for _, c := range in.candidates() {
		if _, ok := in.person[c].(int64); ok && in.fact(c).Integer {
			return c
		}
	}
	return ""
}

// candidates are the queryable columns, the cell's first.
func (in edgeInputs) candidates() []string {
	out := slices.Clone(in.cols)
	for _, f := range in.facts {
		if in.queryable(f.Name) && !slices.Contains(out, f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

// cellConds are the equalities on the cell's columns other than except,
// with the person's values.
func (in edgeInputs) cellConds(except string) []string {
	var conds []string
	for _, c := range in.cols {
		if c != except {
			conds = append(conds, pglex.QuoteIdentAlways(c)+" = "+literal(in.person[c]))
		}
	}
	return conds
}

func (in edgeInputs) count(conds ...string) string {
	return "SELECT COUNT(*) FROM " + pglex.QuoteIdentAlways(in.table) + " WHERE " + strings.Join(conds, " AND ")
}

func (in edgeInputs) groupBy(column string) string {
	c := pglex.QuoteIdentAlways(column)
	return "SELECT " + c + ", COUNT(*) FROM " + pglex.QuoteIdentAlways(in.table) + " GROUP BY " + c
}

// statementTests score one statement by its answer, its SQLSTATE and its
// time, under the names name, name-refused and name-time.
func statementTests(name, about, sql string) []Distinguisher {
	return []Distinguisher{
		answerScore(name, about+": "+sql, sql),
		refusalScore(name+"-refused", name+"'s SQLSTATE (0 when answered)", sql),
		timeScore(name+"-time", "how long "+name+" takes, in microseconds", sql),
	}
}

// groupTests score a GROUP BY by how many rows it returns, its SQLSTATE
// and its time.
func groupTests(name, about, sql string) []Distinguisher {
	return []Distinguisher{
		keysScore(name+"-keys", about+": how many rows "+sql+" returns", sql),
		refusalScore(name+"-refused", name+"'s SQLSTATE (0 when answered)", sql),
		timeScore(name+"-time", "how long "+name+" takes, in microseconds", sql),
	}
}

// textTests aim at the person's text in column t: an equality with the
// cell's other columns, a LIKE on the value's prefix (when the config
// allows LIKE), and a GROUP BY on t.
func (in edgeInputs) textTests(t string) []Distinguisher {
	v := in.person[t].(string)
	tests := statementTests("text-eq", "a count of the person's text with the cell", in.count(append([]string{pglex.QuoteIdentAlways(t) + " = " + literal(v)}, in.cellConds(t)...)...))
	if in.tc.Policy.AllowLike {
		prefix := v
		if _, size := utf8.DecodeLastRuneInString(v); size > 0 && size < len(v) {
			prefix = v[:len(v)-size]
		}
		tests = append(tests, statementTests("like", "a LIKE on the person's text", in.count(pglex.QuoteIdentAlways(t)+" LIKE "+literal(prefix+"%")))...)
	}
	return append(tests, groupTests("text-group", "the GROUP BY of the person's text column", in.groupBy(t))...)
}

// integerTests aim at the person's integer in column c: an equality with
// the cell's other columns, and a GROUP BY on c.
func (in edgeInputs) integerTests(c string) []Distinguisher {
	tests := statementTests("int-eq", "a count of the person's integer with the cell", in.count(append([]string{pglex.QuoteIdentAlways(c) + " = " + literal(in.person[c])}, in.cellConds(c)...)...))
	return append(tests, groupTests("int-group", "the GROUP BY of the person's integer column", in.groupBy(c))...)
}

// The snapshot's fast ways (planner/snapshot/leaf.go and
// rowsets.go), which it takes under the mechanisms that claim no
// loss (under every mechanism before commit 5312032), choose a way for
// each condition from estimates of its work in the table's public size and
// the rows holding each value; these are those estimates' constants, in
// quarters of a nanosecond. The audit cannot ask the firewall for them (it
// speaks SQL only), so it keeps them here: where they change, the switch
// points below move with them.
const (
	wayListedRow = 4  // setting one listed row
	wayWord      = 1  // one word operation of a row set (64 rows)
	wayMaskedRow = 12 // looking at one masked row
	wayDenseFrom = 32 // a value held by one row in 32 or more has a row set of its own
)

// switchPoint is a number of rows holding v's value V without the person,
// for the statement v = V AND w1 = W1 AND ... AND wk = Wk (each Wi held by
// common rows or more), at which the person holding V too moves a way's
// estimate past another's.
type switchPoint struct {
	holders int64
	why     string
}

// switchPoints are the switch points of a table of rows rows:
//   - mask: v's condition is the most selective, so each wi's is evaluated
//     on the rows v's leaves alone, one by one (12 a row) while that costs
//     less than wi's rows listed (its row set and the AND, two words a 64
//     rows, when Wi is frequent; else 4 a row and a word each 64): at
//     120,000 rows, 312 holders are looked at one by one and 313 are not;
//   - dense: V is held by one row in 32 (with the person) and gets a row
//     set of its own (none exists when rows is a multiple of 32: one more
//     row then moves the share past both counts).
func switchPoints(rows, common int64) []switchPoint {
	var out []switchPoint
	words := (rows + 63) / 64
	listed := wayListedRow*common + wayWord*words
	if common*wayDenseFrom >= rows {
		listed = 2 * wayWord * words
	}
	if s := (listed+wayMaskedRow-1)/wayMaskedRow - 1; s >= 1 && s < common {
		out = append(out, switchPoint{s, "each further condition on the rows v's leaves, looked at one by one, or listed"})
	}
	if rows%wayDenseFrom != 0 {
		out = append(out, switchPoint{rows / wayDenseFrom, "the value's own row set, from one row in 32"})
	} else {
		out = append(out, switchPoint{0, fmt.Sprintf("none for the value's own row set: %d rows are a multiple of 32, so one more row and one more holder leave the share on the same side", rows)})
	}
	return out
}

// maxSwitchConditions caps the conditions of the switch statement: each
// frequent value's condition moves its way at the same count, so each adds
// the difference once more.
const maxSwitchConditions = 8

// switchEdges place the person at each switch point of v = V AND w1 = W1
// AND ... AND wk = Wk: v the integer column c, V a value no other row holds,
// the wi the other queryable columns whose most common value Wi is
// frequent (held by one row in 32 or more; else the one column with the
// most common value), in increasing order of its rows, so that they are
// evaluated in the order written. V's holders also hold every Wi, and the
// person every Wi but the last (the next most common value there): the
// conditions before the last all keep the person's row, and the person is
// still outside the counted cell.
func (in edgeInputs) switchEdges(c string, base dataset.NeighbourSpec) ([]edge, []string) {
	var ws []dataset.ColumnFacts
	var most dataset.ColumnFacts
	for _, f := range in.facts {
		if f.Name == c || !in.queryable(f.Name) || f.Common == nil || f.Next == nil {
			continue
		}
		if f.CommonRows*wayDenseFrom >= in.rows {
			ws = append(ws, f)
		}
		if f.CommonRows > most.CommonRows {
			most = f
		}
	}
	if most.Name == "" {
		return nil, []string{"switch: skipped: no other queryable column holds two values"}
	}
	if len(ws) == 0 {
		ws = []dataset.ColumnFacts{most}
	}
	slices.SortStableFunc(ws, func(a, b dataset.ColumnFacts) int { return cmp.Compare(a.CommonRows, b.CommonRows) })
	limit := maxSwitchConditions
	if m := in.tc.Policy.MaxConditions; m > 0 {
		limit = min(limit, m-1)
	}
	ws = ws[:max(1, min(len(ws), limit))]
	v := in.fact(c).MaxInt + 1
	conds := []string{pglex.QuoteIdentAlways(c) + " = " + literal(v)}
	set := map[string]string{c: literal(v)}
	also := map[string]any{}
	for i, w := range ws {
		conds = append(conds, pglex.QuoteIdentAlways(w.Name)+" = "+literal(w.Common))
		also[w.Name] = w.Common
		held := w.Common
		if i == len(ws)-1 {
			held = w.Next
		}
		set[w.Name] = literal(held)
	}
	sql := in.count(conds...)
	tests := statementTests("switch", fmt.Sprintf("a count where a value of %s is held by a switch point's rows, the person one more outside the cell", c), sql)
	points := switchPoints(in.rows, ws[0].CommonRows)
	for _, s := range in.switchRows {
		points = append(points, switchPoint{s, "asked for"})
	}
	var out []edge
	var notes []string
	seen := map[int64]bool{}
	for _, p := range points {
		if seen[p.holders] {
			continue
		}
		seen[p.holders] = true
		if p.holders < 1 || p.holders > in.rows {
			if p.holders == 0 {
				notes = append(notes, "switch: "+p.why)
			} else {
				notes = append(notes, fmt.Sprintf("switch-%d: skipped: the table has %d other rows", p.holders, in.rows))
			}
			continue
		}
		spec := base
		spec.Set, spec.Hold = set, &dataset.Holders{Column: c, Value: v, Rows: p.holders, Also: also}
		out = append(out, edge{name: fmt.Sprintf("switch-%d", p.holders), kind: dataset.Added, spec: spec, tests: tests})
		notes = append(notes, fmt.Sprintf("switch-%d: %d rows hold %s = %d without the person: %s", p.holders, p.holders, c, v, p.why))
	}
	return out, notes
}

// mathEdge aims the overflow oracle at the person: abs() of the smallest
// integer fails (SQLSTATE XX000 from SQLite's "integer overflow"), and
// c - A + -9223372036854775808 is that integer exactly where c = A, where
// the person alone holds A (one past the column's largest value), so that
// a firewall that reads the rows before it knows the expression is total
// fails exactly when the person is there.
func (in edgeInputs) mathEdge(c string, base dataset.NeighbourSpec) edge {
	a := in.fact(c).MaxInt + 1
	spec := base
	spec.Set = map[string]string{c: literal(a)}
	cond := fmt.Sprintf("abs(%s - %d + -9223372036854775808) > 0", pglex.QuoteIdentAlways(c), a)
	sql := in.count(append(in.cellConds(c), cond)...)
	return edge{name: "math", kind: dataset.Added, spec: spec,
		tests: statementTests("math", fmt.Sprintf("the overflow oracle, the person alone holding %s = %d", c, a), sql)}
}

// groupEdge gives a column without a declared domain groupLimit distinct
// values without the person, and the person one more.
func (in edgeInputs) groupEdge(base dataset.NeighbourSpec) (edge, bool) {
	for _, f := range in.facts {
		if !in.queryable(f.Name) || in.tc.Domains[f.Name] != nil {
			continue
		}
		spec := base
		value := "'v0'" // the distinct values are 'v1'..'vN', or 1..N
		if f.Integer {
			value = "0"
		}
		spec.Set, spec.Distinct = map[string]string{f.Name: value}, &dataset.DistinctValues{Column: f.Name, Values: in.groupLimit}
		return edge{name: "groups", kind: dataset.Added, spec: spec, trials: in.groupTrials,
			tests: groupTests("groups", fmt.Sprintf("%d distinct values without the person, one more with", in.groupLimit), in.groupBy(f.Name))}, true
	}
	return edge{}, false
}

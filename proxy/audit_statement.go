package proxy

import (
	"slices"
	"strconv"
	"strings"

	"countwall/pglex"
	"countwall/pgtypes"
	"countwall/planner"
	"countwall/proxy/state/release"
)

// A statement's shape is how the audit keeps an answered statement: its
// tokens as PostgreSQL reads them (keywords and names folded, comments and
// spacing dropped), one space apart, with each string and number constant,
// and each parameter the extended protocol bound, replaced by $1, $2, ...
// in order and kept as the constants; a GROUP BY or ORDER BY position
// (GROUP BY 1) names a column and stays, as in the planner's shapes. Statements that differ only in their
// constants share one shape, which the audit stores once. It is made from
// the tokens the planner lexed when the statement was prepared (shapeOf);
// a statement with $n parameters keeps its tokens, which each execution's
// arguments complete, each placed as a number or a string by the type the
// planner read its parameter as, never by reading the argument as SQL.

// shapeText is the shape of toks with args bound to their parameters, each
// read as types says (nil elements of args are NULL, written as such).
func shapeText(toks []pglex.Token, args []*string, types []pgtypes.OID) (string, []release.Constant) {
	size, n := 0, 0
	for _, t := range toks {
		if t.Kind == pglex.String || t.Kind == pglex.Number || t.Kind == pglex.Param {
			size, n = size+len("$999 "), n+1
			continue
		}
		size += len(t.Raw) + 1
	}
	var b strings.Builder // its String does not copy the text
	b.Grow(size)
	var digits [20]byte
	consts := make([]release.Constant, 0, n)
	prev := &pglex.Token{Kind: pglex.Op, Text: "("}
	for i := range toks {
		t := &toks[i]
		if t.Kind == pglex.Op && t.Text == ";" && i == len(toks)-1 {
			break
		}
		if b.Len() > 0 && spaced(prev, t) {
			b.WriteByte(' ')
		}
		prev = t
		switch t.Kind {
		case pglex.Word, pglex.Op:
			b.WriteString(t.Text)
			continue
		case pglex.QuotedIdent:
			b.WriteString(pglex.QuoteIdent(t.Text))
			continue
		case pglex.String, pglex.Number:
			if t.Kind == pglex.Number && planner.IsOrdinal(toks, i) {
				break // GROUP BY 1 names a column: part of the shape
			}
			consts = append(consts, release.Constant{Text: t.Text, String: t.Kind == pglex.String})
			b.Write(appendPlaceholder(digits[:0], len(consts)))
			continue
		case pglex.Param:
			c, ok := boundConstant(args, types, t.N)
			if !ok {
				b.WriteString("NULL")
				continue
			}
			consts = append(consts, c)
			b.Write(appendPlaceholder(digits[:0], len(consts)))
			continue
		}
		b.WriteString(t.Raw)
	}
	if len(consts) == 0 {
		consts = nil
	}
	return b.String(), consts
}

func appendPlaceholder(b []byte, n int) []byte {
	return strconv.AppendInt(append(b, '$'), int64(n), 10)
}

// boundConstant is the value bound to $n: a number when the planner read
// the parameter as one and the value is written as a plain decimal (NaN
// and Infinity are strings, as PostgreSQL spells them in a statement),
// else a string; false for NULL or a missing argument.
func boundConstant(args []*string, types []pgtypes.OID, n int) (release.Constant, bool) {
	if n < 1 || n > len(args) || args[n-1] == nil {
		return release.Constant{}, false
	}
	v := *args[n-1]
	if n <= len(types) && isNumberType(types[n-1]) {
		if t := strings.TrimSpace(v); plainDecimal(t) {
			return release.Constant{Text: t}, true
		}
	}
	return release.Constant{Text: v, String: true}, true
}

// isNumberType reports whether a parameter of type t holds a number.
func isNumberType(t pgtypes.OID) bool {
	switch t {
	case pgtypes.Int2, pgtypes.Int4, pgtypes.Int8, pgtypes.Float4, pgtypes.Float8, pgtypes.Numeric:
		return true
	}
	return false
}

// plainDecimal reports whether s is a number's value written as a
// statement writes a number: an optional sign, digits with at most one
// point, and an optional exponent.
func plainDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	digits, points := 0, 0
	for _, c := range mant {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			points++
		default:
			return false
		}
	}
	if digits == 0 || points > 1 {
		return false
	}
	if !hasExp {
		return true
	}
	if exp != "" && (exp[0] == '+' || exp[0] == '-') {
		exp = exp[1:]
	}
	return exp != "" && strings.Trim(exp, "0123456789") == ""
}

// spaced says whether a space goes between two tokens: none inside
// parentheses' edges, before a comma, or between a function's name and its
// opening parenthesis.
func spaced(prev, t *pglex.Token) bool {
	if prev.Kind == pglex.Op && prev.Text == "(" {
		return false
	}
	if t.Kind == pglex.Op {
		switch t.Text {
		case ")", ",", ";":
			return false
		case "(":
			return !(prev.Kind == pglex.Word && !pglex.IsReserved(prev.Text))
		}
	}
	return true
}

// releasedCells is what an answer sent: each row's group values and its
// count, as the client received them (the intervals, which follow from the
// count and the mechanism's parameters alone, are not kept). A withheld
// count is kept as its 0 with the mark the wire sent (NULL): a mechanism
// that withholds marks every 0 it publishes (a count the noise pulled down
// to 0 too), so the mark tells the audit's readers no more than the analyst
// was sent, and a threshold answer's mark (the count is below the
// mechanism's threshold, as the plain count would say) is kept as sent.
func releasedCells(res *Result) []release.Cell {
	if res == nil || len(res.Columns) == 0 {
		return nil
	}
	if res.aggregates != nil {
		return releasedSumCells(res)
	}
	count := res.countColumn()
	isFloat := res.Columns[count].Type == ColumnFloat8
	cells := make([]release.Cell, 0, len(res.Rows))
	for _, row := range res.Rows {
		c := release.Cell{IsFloat: isFloat}
		for _, g := range row[:count] {
			c.Group = append(c.Group, release.Datum{Null: g.Null, Text: g.Text})
		}
		c.Suppressed = row[count].Null
		if isFloat {
			c.Value = row[count].Float
		} else {
			c.Value = float64(row[count].Int)
		}
		cells = append(cells, c)
	}
	return cells
}

// released is what the audit row of an answered query keeps beyond its
// outcome: the statement, its structured record and the cells sent.
type released struct {
	shape     string
	constants []release.Constant
	query     *release.Query
	cells     []release.Cell
}

// releasedBy is the record of an answered query's statement and answer,
// args bound to its parameters read as types.
func releasedBy(st *Statement, args []*string, types []pgtypes.OID, res *Result, query *release.Query) released {
	shape, consts := st.shape.text, st.shape.constants
	if st.shape.tokens != nil {
		shape, consts = shapeText(st.shape.tokens, args, types)
	}
	return released{shape: shape, constants: consts, query: query, cells: releasedCells(res)}
}

// preparedShape is a statement's shape for the audit: its text and
// constants, or for a statement with $n parameters the tokens each
// execution's arguments complete.
type preparedShape struct {
	text      string
	constants []release.Constant
	tokens    []pglex.Token
}

// shapeOf is the prepared shape of a statement's tokens; it keeps a copy
// of them for a statement with parameters (the planner reuses the slice).
func shapeOf(toks []pglex.Token) preparedShape {
	if slices.ContainsFunc(toks, func(t pglex.Token) bool { return t.Kind == pglex.Param }) {
		return preparedShape{tokens: slices.Clone(toks)}
	}
	text, consts := shapeText(toks, nil, nil)
	return preparedShape{text: text, constants: consts}
}

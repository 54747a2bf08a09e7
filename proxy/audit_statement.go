package proxy

import (
	"strconv"
	"strings"

	"countwall/pglex"
	"countwall/proxy/state/release"
)

// statementShape is how the audit keeps an answered statement: its tokens
// as PostgreSQL reads them (keywords and names folded, comments and spacing
// dropped), one space apart, with each string and number constant, and each
// parameter the extended protocol bound, replaced by $1, $2, ... in order
// and returned as the constants. Statements that differ only in their
// constants share one shape, which the audit stores once.
func statementShape(sql string, args []*string) (string, []release.Constant) {
	toks, err := pglex.Lex(sql)
	if err != nil {
		return "", nil // not answered: the parser read the same text
	}
	return shapeOfTokens(toks, args)
}

// shapeOfTokens is statementShape of the statement's tokens.
func shapeOfTokens(toks []pglex.Token, args []*string) (string, []release.Constant) {
	var b strings.Builder
	b.Grow(len(toks) * 4)
	var consts []release.Constant
	prev := pglex.Token{Kind: pglex.Op, Text: "("}
	for i, t := range toks {
		if t.Kind == pglex.Op && t.Text == ";" && i == len(toks)-1 {
			break
		}
		text := t.Raw
		switch t.Kind {
		case pglex.Word:
			text = t.Text
		case pglex.QuotedIdent:
			text = pglex.QuoteIdent(t.Text)
		case pglex.String, pglex.Number:
			consts = append(consts, release.Constant{Text: t.Text, String: t.Kind == pglex.String})
			text = placeholder(len(consts))
		case pglex.Param:
			c, ok := boundConstant(args, t.N)
			if !ok {
				text = "NULL"
				break
			}
			consts = append(consts, c)
			text = placeholder(len(consts))
		case pglex.Op:
			text = t.Text
		}
		if b.Len() > 0 && spaced(prev, t) {
			b.WriteByte(' ')
		}
		b.WriteString(text)
		prev = t
	}
	return b.String(), consts
}

func placeholder(n int) string { return "$" + strconv.Itoa(n) }

// boundConstant is the value bound to $n: a number when it reads as one,
// else a string; false for NULL or a missing argument.
func boundConstant(args []*string, n int) (release.Constant, bool) {
	if n < 1 || n > len(args) || args[n-1] == nil {
		return release.Constant{}, false
	}
	v := *args[n-1]
	toks, err := pglex.Lex(v)
	if err == nil && len(toks) == 1 && toks[0].Kind == pglex.Number && toks[0].Raw == v {
		return release.Constant{Text: v}, true
	}
	return release.Constant{Text: v, String: true}, true
}

// spaced says whether a space goes between two tokens: none inside
// parentheses' edges, before a comma, or between a function's name and its
// opening parenthesis.
func spaced(prev, t pglex.Token) bool {
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
// count and the mechanism's parameters alone, are not kept). The mechanism's suppressed mark is
// not kept: the wire sends a withheld count as a plain 0, and under bounded
// and cellkey the mark would tell a small count from a larger one the noise
// pulled down to 0, which the audit's readers (the risk monitor among them)
// must not know beyond what the analyst was sent.
func releasedCells(res *Result) []release.Cell {
	if res == nil || len(res.Columns) == 0 {
		return nil
	}
	count := res.countColumn()
	isFloat := res.Columns[count].Type == ColumnFloat8
	cells := make([]release.Cell, 0, len(res.Rows))
	for _, row := range res.Rows {
		c := release.Cell{IsFloat: isFloat}
		for _, g := range row[:count] {
			c.Group = append(c.Group, release.Datum{Null: g.Null, Text: g.Text})
		}
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

// releasedBy is the record of an answered query's statement and answer.
func releasedBy(st *Statement, args []*string, res *Result, query *release.Query) released {
	shape, consts := st.shape.text, st.shape.constants
	if !st.shape.known {
		shape, consts = statementShape(st.SQL, args)
	}
	return released{shape: shape, constants: consts, query: query, cells: releasedCells(res)}
}

// preparedShape is a statement's shape for the audit, made from the tokens
// the planner lexed when it was prepared (known), so that an answer does
// not lex its text again; not known for a statement with $n parameters,
// whose shape depends on each execution's arguments.
type preparedShape struct {
	text      string
	constants []release.Constant
	known     bool
}

// shapeOf is the prepared shape of a statement's tokens.
func shapeOf(toks []pglex.Token) preparedShape {
	for _, t := range toks {
		if t.Kind == pglex.Param {
			return preparedShape{}
		}
	}
	text, consts := shapeOfTokens(toks, nil)
	return preparedShape{text: text, constants: consts, known: true}
}

package catalog

import (
	"database/sql/driver"
	"encoding/json"
	"strings"

	"countwall/pglex"

	"modernc.org/sqlite"
)

// setReturning are the set-returning functions a FROM list may call; each
// renders its rows as a JSON array that json_each turns into a table.
var setReturning = map[string]func(args []string) (string, error){
	"generate_series": func(a []string) (string, error) {
		if len(a) < 2 {
			return "", unsupported("generate_series needs a start and a stop")
		}
		return "cw_series(" + a[0] + ", " + a[1] + ")", nil
	},
	"unnest": func(a []string) (string, error) {
		if len(a) != 1 {
			return "", unsupported("unnest of more than one array")
		}
		return a[0], nil
	},
	"generate_subscripts": func(a []string) (string, error) {
		if len(a) < 1 {
			return "", unsupported("generate_subscripts needs an array")
		}
		return "cw_series(1, json_array_length(" + a[0] + "))", nil
	},
}

// tableFunc is a set-returning call in FROM and its alias: f(...) [AS]
// alias [(column)].
type tableFunc struct {
	name, rows    string
	alias, column string
	state         int // 0 after the call, 1 after AS, 2 after the alias, 3 in the column list, 4 after the column
}

func (t *translator) startTableFunc(name string, render func([]string) (string, error), args []string) error {
	rows, err := render(args)
	if err != nil {
		return err
	}
	t.tableFunc = &tableFunc{name: name, rows: rows}
	return nil
}

// tableFuncAlias reads the alias after a set-returning call; it reports
// whether it took the token.
func (t *translator) tableFuncAlias(tok pglex.Token) bool {
	tf := t.tableFunc
	isName := tok.Kind == pglex.QuotedIdent || (tok.Kind == pglex.Word && !sqlKeywords[tok.Text] && !clauseWords[tok.Text])
	switch {
	case tf.state == 0 && tok.Kind == pglex.Word && tok.Text == "as":
		tf.state = 1
	case (tf.state == 0 || tf.state == 1) && isName:
		tf.alias, tf.state = tok.Text, 2
	case tf.state == 2 && tok.Kind == pglex.Op && tok.Text == "(":
		tf.state = 3
	case tf.state == 3 && (tok.Kind == pglex.Word || tok.Kind == pglex.QuotedIdent):
		tf.column, tf.state = tok.Text, 4
	case tf.state == 4 && tok.Kind == pglex.Op && tok.Text == ")":
		t.endTableFunc()
	default:
		t.endTableFunc()
		return false
	}
	return true
}

// clauseWords end a FROM item.
var clauseWords = map[string]bool{
	"where": true, "left": true, "right": true, "full": true, "inner": true, "cross": true, "natural": true,
	"order": true, "group": true, "limit": true, "offset": true, "having": true, "window": true,
}

// endTableFunc emits the pending set-returning call as a subquery: its
// one column is named by the column list, else by the alias (as
// PostgreSQL names a single-column function's output), else by the
// function.
func (t *translator) endTableFunc() {
	tf := t.tableFunc
	if tf == nil {
		return
	}
	t.tableFunc = nil
	column := tf.column
	if column == "" {
		column = tf.alias
	}
	if column == "" {
		column = tf.name
	}
	out := "(SELECT value AS " + pglex.QuoteIdentAlways(column) + " FROM json_each(" + tf.rows + "))"
	if tf.alias != "" {
		out += " AS " + pglex.QuoteIdentAlways(tf.alias)
	}
	t.emit(out)
}

// maxSeries bounds generate_series: the catalog never needs long ones.
const maxSeries = 10000

// sqlSeries is generate_series(start, stop) as a JSON array.
func sqlSeries(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	start, ok1 := args[0].(int64)
	stop, ok2 := args[1].(int64)
	if !ok1 || !ok2 || stop < start {
		return "[]", nil
	}
	// The width in unsigned arithmetic: stop-start overflows int64 when
	// the ends are far apart, and a loop to stop would never end when stop
	// is the largest int64.
	n := min(uint64(stop)-uint64(start), maxSeries-1) + 1
	vals := make([]int64, 0, n)
	for i := range n {
		vals = append(vals, start+int64(i))
	}
	b, _ := json.Marshal(vals)
	return string(b), nil
}

// trimCall renders trim([leading|trailing|both] [chars] from x).
func trimCall(_ *translator, args []string) (string, error) {
	if len(args) != 1 {
		return "trim(" + strings.Join(args, ", ") + ")", nil
	}
	words := strings.Fields(args[0])
	fn := "trim"
	if len(words) > 0 {
		switch words[0] {
		case "leading":
			fn, words = "ltrim", words[1:]
		case "trailing":
			fn, words = "rtrim", words[1:]
		case "both":
			words = words[1:]
		}
	}
	for i, w := range words {
		if w == "from" {
			chars := strings.Join(words[:i], " ")
			operand := strings.Join(words[i+1:], " ")
			if chars == "" {
				return fn + "(" + operand + ")", nil
			}
			return fn + "(" + operand + ", " + chars + ")", nil
		}
	}
	return fn + "(" + strings.Join(words, " ") + ")", nil
}

// substringArgs reads substring(s FROM start FOR count), either part
// optional, as substr's arguments (psql's and pgcli's \d send
// substring(... for 128)); the comma form passes as it is.
func substringArgs(pieces []string) []string {
	operand, start, count := []string{}, []string{"1"}, []string(nil)
	cur, keywords := &operand, false
	for _, p := range pieces {
		switch p {
		case "from":
			start, cur, keywords = []string{}, &start, true
		case "for":
			count, cur, keywords = []string{}, &count, true
		default:
			*cur = append(*cur, p)
		}
	}
	if !keywords {
		return splitArgs(pieces)
	}
	args := []string{strings.Join(operand, " "), strings.Join(start, " ")}
	if count != nil {
		args = append(args, strings.Join(count, " "))
	}
	return args
}

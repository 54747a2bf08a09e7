package planner

import (
	"bytes"
	"strconv"
	"strings"
	"sync"

	"github.com/xwb1989/sqlparser"

	"countwall/ir"
	"countwall/pglex"
)

// Attack programs send hundreds of thousands of statements that differ only
// in their constants (two-partition IN lists, threshold ranges), and the
// MySQL-grammar parser is the largest part of reading one. So a statement's
// shape, its text for the parser with each string and unsigned number
// replaced by a value argument :lN, is parsed once; the parse tree is kept
// with its value-argument nodes, and each statement of that shape fills
// them with its own constants, as the parser would have read them, before
// the tree is read into the IR. The tree is then exactly the one parsing
// the statement's own text gives (the shape test checks this on every
// statement of the planner's tests).
//
// A number right after + or - stays in the shape: the parser folds a sign
// into an integer constant but not into a value argument. A shape the
// parser refuses (a constant where the grammar takes no value argument,
// such as a string used as an alias) is remembered as such, and statements
// of that shape are parsed from their own text.

// literalSlotPrefix names the value arguments standing for constants; $n
// parameters are :vN, so the two never meet.
const literalSlotPrefix = ":l"

// maxShapes bounds the cache: a client sending ever new shapes empties it
// rather than grows it (each entry is at most one statement's size).
const maxShapes = 1024

// shape is one parsed statement shape.
type shape struct {
	// mu is held while slots carry one statement's constants and the tree
	// is read: the tree is shared by every statement of the shape.
	mu    sync.Mutex
	tree  sqlparser.Statement // nil: the parser refused the shape
	slots []*sqlparser.SQLVal // the :lN nodes, in N order
	blank []sqlparser.SQLVal  // what each slot holds between statements
}

type shapeCache struct {
	mu     sync.Mutex
	shapes map[string]*shape
}

var shapes = &shapeCache{shapes: map[string]*shape{}}

// lookup returns the shape for key, parsing it on first use.
func (c *shapeCache) lookup(key string, constants int) *shape {
	c.mu.Lock()
	sh, ok := c.shapes[key]
	c.mu.Unlock()
	if ok {
		return sh
	}
	sh = &shape{}
	if tree, err := sqlparser.Parse(key); err == nil {
		if slots := literalSlots(tree); len(slots) == constants {
			sh.tree, sh.slots = tree, slots
			for _, slot := range slots {
				sh.blank = append(sh.blank, *slot)
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.shapes) >= maxShapes {
		clear(c.shapes)
	}
	if prior, ok := c.shapes[key]; ok {
		return prior // parsed at the same time by another statement
	}
	c.shapes[key] = sh
	return sh
}

// literalSlots finds the :lN nodes of a tree, in N order; nil when they
// are not exactly :l1..:lN, each once.
func literalSlots(tree sqlparser.Statement) []*sqlparser.SQLVal {
	var found []*sqlparser.SQLVal
	sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) { //nolint:errcheck // the visitor returns no error
		if v, ok := node.(*sqlparser.SQLVal); ok && v.Type == sqlparser.ValArg && bytes.HasPrefix(v.Val, []byte(literalSlotPrefix)) {
			found = append(found, v)
		}
		return true, nil
	}, tree)
	out := make([]*sqlparser.SQLVal, len(found))
	for _, v := range found {
		n, err := strconv.Atoi(string(v.Val[len(literalSlotPrefix):]))
		if err != nil || n < 1 || n > len(out) || out[n-1] != nil {
			return nil
		}
		out[n-1] = v
	}
	return out
}

// constantOf is the parse-tree value the parser gives a string or number
// token; false for a number its tokenizer would not read as one constant.
//
// The value's bytes are appended to *arena, which the caller sizes for all
// of a statement's constants, so that they take one allocation, not one each.
func constantOf(t pglex.Token, arena *[]byte) (sqlparser.SQLVal, bool) {
	if t.Kind == pglex.String {
		// render escapes only backslash and quote, which the parser
		// unescapes, so the value is the token's own; a zero byte, which
		// render refuses, stays in the text for it to refuse.
		return sqlparser.SQLVal{Type: sqlparser.StrVal, Val: arenaBytes(arena, t.Text)}, strings.IndexByte(t.Text, 0) < 0
	}
	if allDigits(t.Text) {
		// What the parser's tokenizer reads as one INTEGRAL, bytes unchanged.
		return sqlparser.SQLVal{Type: sqlparser.IntVal, Val: arenaBytes(arena, t.Text)}, true
	}
	tkn := sqlparser.NewStringTokenizer(t.Text)
	typ, val := tkn.Scan()
	if next, _ := tkn.Scan(); next != 0 {
		return sqlparser.SQLVal{}, false
	}
	switch typ {
	case sqlparser.INTEGRAL:
		return sqlparser.SQLVal{Type: sqlparser.IntVal, Val: val}, true
	case sqlparser.FLOAT:
		return sqlparser.SQLVal{Type: sqlparser.FloatVal, Val: val}, true
	case sqlparser.HEXNUM:
		return sqlparser.SQLVal{Type: sqlparser.HexNum, Val: val}, true
	}
	return sqlparser.SQLVal{}, false
}

// shapeOf finds the shape of toks and the statement's constants that fill
// it. ok is false when the statement has no usable shape; the caller then
// parses its text.
func shapeOf(toks []pglex.Token) (sh *shape, constants []sqlparser.SQLVal, ok bool) {
	n, size := 0, 0
	for _, t := range toks {
		if t.Kind == pglex.String || t.Kind == pglex.Number {
			n, size = n+1, size+len(t.Text)
		}
	}
	constants = make([]sqlparser.SQLVal, 0, n)
	arena := make([]byte, 0, size)
	text, err := renderSlots(toks, func(i int, t pglex.Token) bool {
		if t.Kind == pglex.Number && i > 0 && toks[i-1].Kind == pglex.Op && (toks[i-1].Text == "-" || toks[i-1].Text == "+") {
			return false
		}
		if t.Kind == pglex.Number && IsOrdinal(toks, i) {
			return false // GROUP BY 1 names a column: part of the shape
		}
		v, ok := constantOf(t, &arena)
		if ok {
			constants = append(constants, v)
		}
		return ok
	})
	if err != nil || len(constants) == 0 {
		return nil, nil, false // no constants: nothing to share; errors come from render again
	}
	sh = shapes.lookup(text.text, len(constants))
	if sh.tree == nil {
		return nil, nil, false
	}
	return sh, constants, true
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// arenaBytes appends s to *arena and returns its copy there, capped so that
// appending to it cannot reach the next value.
func arenaBytes(arena *[]byte, s string) []byte {
	start := len(*arena)
	*arena = append(*arena, s...)
	return (*arena)[start:len(*arena):len(*arena)]
}

// read reads the shape's tree with one statement's constants in its value
// arguments.
func (sh *shape) read(p *parser, constants []sqlparser.SQLVal) (ir.Statement, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for i, slot := range sh.slots {
		*slot = constants[i]
	}
	defer func() {
		// The tree keeps no statement's constants once it is read.
		for i, slot := range sh.slots {
			*slot = sh.blank[i]
		}
	}()
	return p.fromTree(sh.tree)
}

// IsOrdinal reports whether the number at i is a GROUP BY or ORDER BY
// item of its own (GROUP BY 1, 2): a select-list position, not a value.
// The audit's shape keeps it as this package's shape does.
func IsOrdinal(toks []pglex.Token, i int) bool {
	if i+1 < len(toks) {
		if next := toks[i+1]; !(isOp(next, ",") || next.Kind == pglex.Word && ordinalFollowers[next.Text]) {
			return false
		}
	}
	for j := i - 1; j > 0; j -= 2 {
		// Back over "n ," items to the BY that starts the list.
		if isWord(toks[j], "by") {
			return isWord(toks[j-1], "group") || isWord(toks[j-1], "order")
		}
		if !isOp(toks[j], ",") || j < 2 {
			return false
		}
		if prev := toks[j-1]; prev.Kind != pglex.Number && !(prev.Kind == pglex.Word && ordinalFollowers[prev.Text]) {
			return false
		}
		if prev := toks[j-1]; prev.Kind == pglex.Word {
			j-- // an ASC or DESC after the previous item
		}
	}
	return false
}

// ordinalFollowers are the words that may follow an ordinal item.
var ordinalFollowers = map[string]bool{"asc": true, "desc": true, "order": true, "having": true, "limit": true, "offset": true}

package planner

import (
	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
	"countwall/pgtypes"
)

// readPrepare reads PREPARE name [(type, ...)] AS query: the query is
// prepared as the protocol's Parse prepares it, its parameters of the
// types declared (the rest typed by their use), under name, and EXECUTE
// runs it. isPrepare is false for any other statement.
func readPrepare(sql string) (p preparation, isPrepare bool, err error) {
	toks, ok := startingWith(sql, "prepare")
	if !ok {
		return preparation{}, false, nil
	}
	p, err = prepareAs(sql, toks)
	return p, true, err
}

// preparation is what a PREPARE reads: the name, the query and the types
// declared for its parameters.
type preparation struct {
	name, query string
	types       []pgtypes.OID
}

// prepareAs reads a PREPARE's tokens; the query's text is cut from sql, or
// left out when sql is "".
func prepareAs(sql string, toks []pglex.Token) (preparation, error) {
	toks = withoutSemicolon(toks)
	if len(toks) < 4 || (toks[1].Kind != pglex.Word && toks[1].Kind != pglex.QuotedIdent) {
		return preparation{}, pgerror.Errorf(pgerror.SyntaxError, "PREPARE needs a name and a query: PREPARE name AS SELECT ...")
	}
	p, as := preparation{name: toks[1].Text}, 2
	if isOp(toks[2], "(") {
		var err error
		if p.types, as, err = declaredParamTypes(toks, 2); err != nil {
			return preparation{}, err
		}
	}
	if as+1 >= len(toks) || !isWord(toks[as], "as") {
		return preparation{}, pgerror.Errorf(pgerror.SyntaxError, "PREPARE needs AS before the query: PREPARE name AS SELECT ...")
	}
	if sql != "" {
		first, last := toks[as+1], toks[len(toks)-1]
		p.query = sql[first.Pos : last.Pos+len(last.Raw)]
	}
	return p, nil
}

// executeArg is one argument of EXECUTE name (arg, ...) as written: an
// optional sign before a constant, a parameter or a parenthesised or
// CAST(... AS type) argument, followed by any casts (x::type). It is
// typed and cast when the EXECUTE runs, as PostgreSQL transforms the
// arguments then (ExecuteArgs).
type executeArg struct {
	sign  byte
	inner *executeArg // a parenthesised argument or a CAST's operand, or nil
	token pglex.Token // else the string, number, NULL or $n
	casts []string    // the canonical names of the types cast to, in order
}

// readExecute reads EXECUTE name [(arg, ...)].
func readExecute(toks []pglex.Token) (*ir.Chatter, []executeArg, error) {
	bad := pgerror.Errorf(pgerror.SyntaxError, "EXECUTE needs a prepared statement's name and its arguments in parentheses: EXECUTE name (30, 'F')")
	toks = withoutSemicolon(toks)
	if len(toks) < 2 || (toks[1].Kind != pglex.Word && toks[1].Kind != pglex.QuotedIdent) {
		return nil, nil, bad
	}
	ex := &ir.Chatter{Kind: ir.ChatterExecute, Value: toks[1].Text}
	rest := toks[2:]
	if len(rest) == 0 {
		return ex, nil, nil
	}
	if len(rest) < 3 || !isOp(rest[0], "(") || matchingParen(rest, 0) != len(rest)-1 {
		return nil, nil, bad
	}
	var args []executeArg
	for _, arg := range splitArgs(rest[1 : len(rest)-1]) {
		a, err := readExecuteArg(arg)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, a)
	}
	return ex, args, nil
}

// splitArgs splits a list at its commas outside parentheses.
func splitArgs(toks []pglex.Token) [][]pglex.Token {
	var out [][]pglex.Token
	depth, start := 0, 0
	for i := 0; i <= len(toks); i++ {
		switch {
		case i == len(toks) || (depth == 0 && isOp(toks[i], ",")):
			out, start = append(out, toks[start:i]), i+1
		case isOp(toks[i], "("):
			depth++
		case isOp(toks[i], ")"):
			depth--
		}
	}
	return out
}

// errExecuteArg refuses an argument that is not a constant, a parameter
// or a cast of one: arithmetic, functions and column names.
var errExecuteArg = pgerror.Errorf(pgerror.FeatureNotSupported,
	"EXECUTE's arguments are constants, each optionally signed or cast: write the value itself, as in EXECUTE name (31, 'F', 2.5::int)")

// readExecuteArg reads one argument's tokens.
func readExecuteArg(toks []pglex.Token) (executeArg, error) {
	var a executeArg
	if len(toks) > 0 && (isOp(toks[0], "-") || isOp(toks[0], "+")) {
		a.sign, toks = toks[0].Text[0], toks[1:]
	}
	if len(toks) == 0 {
		return executeArg{}, pgerror.Errorf(pgerror.SyntaxError, "EXECUTE has an empty argument")
	}
	n := 1
	switch t := toks[0]; {
	case isOp(t, "(") || (isWord(t, "cast") && len(toks) > 1 && isOp(toks[1], "(")):
		inner, end, err := readBracketedArg(toks)
		if err != nil {
			return executeArg{}, err
		}
		a.inner, n = &inner, end+1
	case t.Kind == pglex.String || t.Kind == pglex.Number || t.Kind == pglex.Param || isWord(t, "null"):
		a.token = t
	case (t.Kind == pglex.QuotedIdent || (t.Kind == pglex.Word && !pglex.IsReserved(t.Text))) && (len(toks) == 1 || isOp(toks[1], "::")):
		// No query is read beside EXECUTE: a name is no column.
		return executeArg{}, pgerror.Errorf(pgerror.UndefinedColumn, "column %q does not exist", t.Text)
	default:
		return executeArg{}, errExecuteArg
	}
	for rest := toks[n:]; len(rest) > 0; {
		if !isOp(rest[0], "::") {
			return executeArg{}, errExecuteArg
		}
		typ, k, err := readType(rest[1:])
		if err != nil {
			return executeArg{}, err
		}
		a.casts, rest = append(a.casts, typ), rest[1+k:]
	}
	return a, nil
}

// readBracketedArg reads (arg) or CAST(arg AS type) at the start of toks,
// and where it ends.
func readBracketedArg(toks []pglex.Token) (executeArg, int, error) {
	open := 0
	if isWord(toks[0], "cast") {
		open = 1
	}
	end := matchingParen(toks, open)
	if end < 0 {
		return executeArg{}, 0, pgerror.Errorf(pgerror.SyntaxError, "syntax error at end of input")
	}
	if open == 0 {
		inner, err := readExecuteArg(toks[1:end])
		return inner, end, err
	}
	operand, typ, err := castParts(toks[2:end])
	if err != nil {
		return executeArg{}, 0, err
	}
	inner, err := readExecuteArg(operand)
	if err != nil {
		return executeArg{}, 0, err
	}
	return executeArg{inner: &inner, casts: []string{typ}}, end, nil
}

// ExecuteArgs are the arguments of the EXECUTE the statement is, for a
// prepared statement whose parameters have the given types, in text form
// for its Bind (nil: NULL). Each is typed and cast as written, then cast
// to its parameter's type as PostgreSQL's assignment cast does: 40.5 for
// an integer is 41, a quoted constant is left to the type's input
// function, and a type with no assignment cast to the parameter's is
// refused (42804). A parameter of the EXECUTE's own is refused as
// PostgreSQL refuses it (42P02): EXECUTE binds none.
func (pr *Prepared) ExecuteArgs(name string, types []pgtypes.OID) ([]*string, error) {
	if len(pr.execute) != len(types) {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "wrong number of parameters for prepared statement %q: it takes %d, EXECUTE gave %d", name, len(types), len(pr.execute))
	}
	p := &parser{cat: pr.cat}
	out := make([]*string, len(types))
	for i, a := range pr.execute {
		o, err := p.executeOperand(a)
		if err != nil {
			return nil, err
		}
		if err := p.assign(&o, types[i], i+1); err != nil {
			return nil, err
		}
		if !o.null {
			out[i] = &o.text
		}
	}
	return out, nil
}

// executeOperand is an EXECUTE's argument typed and cast as written.
func (p *parser) executeOperand(a executeArg) (operand, error) {
	var o operand
	switch t := a.token; {
	case a.inner != nil:
		var err error
		if o, err = p.executeOperand(*a.inner); err != nil {
			return operand{}, err
		}
	case t.Kind == pglex.Param:
		return operand{}, pgerror.Errorf(pgerror.UndefinedParameter, "there is no parameter $%d", t.N)
	case t.Kind == pglex.String:
		o = operand{typ: pgtypes.Unknown, text: t.Text}
	case t.Kind == pglex.Number && len(a.casts) == 0:
		// The grammar makes a sign before a number part of it.
		o, a.sign = numberOperand(t.Raw, allDigits(t.Raw), a.sign), 0
	case t.Kind == pglex.Number:
		o = numberOperand(t.Raw, allDigits(t.Raw), 0)
	default:
		o = operand{typ: pgtypes.Unknown, null: true}
	}
	for _, typ := range a.casts {
		t, limit, err := castType(typ)
		if err != nil {
			return operand{}, err
		}
		if err := p.convert(&o, t, typ); err != nil {
			return operand{}, err
		}
		if limit > 0 && !o.null {
			o.text = clipChars(o.text, limit)
		}
	}
	if a.sign == 0 {
		return o, nil
	}
	o.sign = a.sign
	o, err := p.signed(o)
	if err != nil {
		return operand{}, err
	}
	return o, foldSign(&o)
}

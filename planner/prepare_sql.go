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

// parseExecute reads EXECUTE name [(constant, ...)]: each argument a
// string, a number (a sign allowed) or NULL, handed on in text form.
func parseExecute(toks []pglex.Token) (ir.Statement, error) {
	bad := pgerror.Errorf(pgerror.SyntaxError, "EXECUTE needs a prepared statement's name and its arguments as constants: EXECUTE name (30, 'F')")
	if len(toks) < 2 || (toks[1].Kind != pglex.Word && toks[1].Kind != pglex.QuotedIdent) {
		return nil, bad
	}
	ex := &ir.Chatter{Kind: ir.ChatterExecute, Value: toks[1].Text}
	rest := toks[2:]
	if len(rest) == 0 {
		return ex, nil
	}
	if len(rest) < 2 || !isOp(rest[0], "(") || !isOp(rest[len(rest)-1], ")") {
		return nil, bad
	}
	for _, arg := range splitOnCommas(rest[1 : len(rest)-1]) {
		switch {
		case len(arg) == 1 && arg[0].Kind == pglex.String:
			v := arg[0].Text
			ex.Args = append(ex.Args, &v)
		case len(arg) == 1 && arg[0].Kind == pglex.Number:
			v := arg[0].Raw
			ex.Args = append(ex.Args, &v)
		case len(arg) == 2 && (isOp(arg[0], "-") || isOp(arg[0], "+")) && arg[1].Kind == pglex.Number:
			v := arg[0].Text + arg[1].Raw
			ex.Args = append(ex.Args, &v)
		case len(arg) == 1 && isWord(arg[0], "null"):
			ex.Args = append(ex.Args, nil)
		default:
			return nil, bad
		}
	}
	return ex, nil
}

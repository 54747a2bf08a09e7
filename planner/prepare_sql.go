package planner

import (
	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
)

// readPrepare reads PREPARE name AS query: the query is prepared as the
// protocol's Parse prepares it, under name, and EXECUTE runs it. isPrepare
// is false for any other statement; PREPARE with declared parameter types
// is refused with err (the query's use types its parameters).
func readPrepare(sql string) (name, query string, isPrepare bool, err error) {
	toks, ok := startingWith(sql, "prepare")
	if !ok {
		return "", "", false, nil
	}
	name, query, err = prepareAs(sql, toks)
	return name, query, true, err
}

// prepareAs reads a PREPARE's tokens; the query's text is cut from sql, or
// left out when sql is "".
func prepareAs(sql string, toks []pglex.Token) (name, query string, err error) {
	toks = withoutSemicolon(toks)
	if len(toks) < 4 || (toks[1].Kind != pglex.Word && toks[1].Kind != pglex.QuotedIdent) {
		return "", "", pgerror.Errorf(pgerror.SyntaxError, "PREPARE needs a name and a query: PREPARE name AS SELECT ...")
	}
	if isOp(toks[2], "(") {
		return "", "", pgerror.Errorf(pgerror.FeatureNotSupported, "PREPARE with parameter types is not supported; leave them out: the query's use types its parameters")
	}
	if !isWord(toks[2], "as") {
		return "", "", pgerror.Errorf(pgerror.SyntaxError, "PREPARE needs AS before the query: PREPARE name AS SELECT ...")
	}
	if sql == "" {
		return toks[1].Text, "", nil
	}
	first, last := toks[3], toks[len(toks)-1]
	return toks[1].Text, sql[first.Pos : last.Pos+len(last.Raw)], nil
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

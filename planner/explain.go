package planner

import (
	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
)

// EXPLAIN SELECT ... is read here, as the statement it explains: the Engine
// prices and describes it without running it (proxy/explain.go).

// explained splits a leading EXPLAIN off a statement's tokens, refusing
// EXPLAIN without a statement and EXPLAIN's options (ANALYZE would run
// the query).
func explained(toks []pglex.Token) (bool, []pglex.Token, error) {
	if len(toks) == 0 || toks[0].Kind != pglex.Word || toks[0].Text != "explain" {
		return false, toks, nil
	}
	if len(toks) == 1 || (toks[1].Kind == pglex.Op && toks[1].Text == ";") {
		return true, nil, pgerror.Errorf(pgerror.SyntaxError, "syntax error at end of input").WithHint("EXPLAIN SELECT COUNT(*) FROM ... says what the query would cost")
	}
	next := toks[1]
	if (next.Kind == pglex.Word && (next.Text == "analyze" || next.Text == "analyse" || next.Text == "verbose")) ||
		(next.Kind == pglex.Op && next.Text == "(") {
		return true, nil, pgerror.Errorf(pgerror.FeatureNotSupported, "EXPLAIN options are not supported").
			WithHint("EXPLAIN SELECT ... shows the cost and the expected error without reading the data; ANALYZE would run the query")
	}
	return true, toks[1:], nil
}

// Explained reports whether the statement is EXPLAIN of the statement it
// reads.
func (pr *Prepared) Explained() bool { return pr.explain }

// explainable refuses EXPLAIN of anything but a query.
func (pr *Prepared) explainable(st ir.Statement) (ir.Statement, error) {
	if _, ok := st.(*ir.Query); pr.explain && !ok {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "EXPLAIN is supported for SELECT COUNT queries only")
	}
	return st, nil
}

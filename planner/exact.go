package planner

import (
	"math"
	"math/big"

	"countwall/ir"
)

// PostgreSQL compares an integer column with a numeric exactly (integer
// against numeric) and with a real or a double precision after converting
// the integer to double precision, while SQLite would compare with the
// nearest float64 and exactly: `age = 30.00000000000000000001` matches no
// row in PostgreSQL and every 30-year-old after rounding, and
// `age = '9007199254740992'::float8` matches 9007199254740993 in
// PostgreSQL alone. Such a comparison is rewritten into the integer
// comparison that selects the same rows.
//
// As an integer a grows, `a` compared with the value goes from below
// through equal to above (converting to double precision only merges
// neighbours into one double), so the integers on which a comparison holds
// are one run, known from two integers: the first not below the value (ge)
// and the first above it (gt). `a = v` holds on ge..gt-1, `a < v` below ge,
// `a <= v` below gt, and so on.

// edge is ge or gt: an integer, or past the int64 range above (none).
type edge struct {
	n    int64
	none bool // every integer is below the value (ge) or not above it (gt)
}

// edges are where the integers stop being below the value and start being
// above it.
type edges struct{ ge, gt edge }

// single reports whether exactly one integer equals the value: then every
// comparison with the value is that comparison with the integer.
func (e edges) single() (int64, bool) {
	return e.ge.n, !e.ge.none && !e.gt.none && e.gt.n-e.ge.n == 1
}

// ratEdges are the edges of an exact rational: ge = ceil(r), gt = floor(r)+1.
func ratEdges(r *big.Rat) edges {
	return edges{ge: ratEdge(r, true), gt: ratEdge(r, false)}
}

func ratEdge(r *big.Rat, ge bool) edge {
	// QuoRem truncates toward zero, leaving a remainder of r's sign.
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	switch {
	case ge && m.Sign() > 0: // ceil
		q.Add(q, big.NewInt(1))
	case !ge && m.Sign() >= 0: // floor + 1
		q.Add(q, big.NewInt(1))
	}
	switch {
	case q.Cmp(minInt64) < 0:
		return edge{n: math.MinInt64}
	case q.Cmp(maxInt64) > 0:
		return edge{none: true}
	}
	return edge{n: q.Int64()}
}

var (
	minInt64 = new(big.Int).SetInt64(math.MinInt64)
	maxInt64 = new(big.Int).SetInt64(math.MaxInt64)
)

// floatEdges are the edges of a double precision value against integers
// converted to double precision, NaN above them all. The conversion is
// monotonic, so each edge is found by bisection over the int64 range.
func floatEdges(f float64) edges {
	return edges{
		ge: firstInt(func(a int64) bool { return pgFloatCompare(float64(a), f) >= 0 }),
		gt: firstInt(func(a int64) bool { return pgFloatCompare(float64(a), f) > 0 }),
	}
}

// firstInt is the least int64 for which holds is true, where holds turns
// true once and stays true as the integer grows.
func firstInt(holds func(int64) bool) edge {
	if !holds(math.MaxInt64) {
		return edge{none: true}
	}
	// Bisect over offsets from MinInt64, which fit a uint64.
	at := func(off uint64) int64 { return int64(off ^ 1<<63) }
	lo, hi := uint64(0), uint64(math.MaxUint64)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if holds(at(mid)) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return edge{n: at(lo)}
}

// numericEdges are the edges of a numeric: NaN is above every number, as
// is Infinity; -Infinity below.
func numericEdges(n numeric) edges {
	switch n.kind {
	case numericNaN, numericPosInf:
		return edges{ge: edge{none: true}, gt: edge{none: true}}
	case numericNegInf:
		return edges{ge: edge{n: math.MinInt64}, gt: edge{n: math.MinInt64}}
	}
	return ratEdges(n.rat())
}

// intRun is the integers lo..hi; lo MinInt64 and hi MaxInt64 bound
// nothing.
type intRun struct {
	lo, hi int64
	empty  bool
}

// runOf is the run of integers on which `integer op value` holds, for op
// one of = < <= > >=.
func runOf(op string, e edges) intRun {
	switch op {
	case "<":
		return below(e.ge)
	case "<=":
		return below(e.gt)
	case ">":
		return from(e.gt)
	case ">=":
		return from(e.ge)
	}
	r, b := from(e.ge), below(e.gt)
	if r.empty || b.empty || b.hi < r.lo {
		return intRun{empty: true}
	}
	return intRun{lo: r.lo, hi: b.hi}
}

func below(e edge) intRun {
	switch {
	case e.none:
		return intRun{lo: math.MinInt64, hi: math.MaxInt64}
	case e.n == math.MinInt64:
		return intRun{empty: true}
	}
	return intRun{lo: math.MinInt64, hi: e.n - 1}
}

func from(e edge) intRun {
	if e.none {
		return intRun{empty: true}
	}
	return intRun{lo: e.n, hi: math.MaxInt64}
}

// integerCompare is `col op v` on integer column col, for a value whose
// edges are e.
func integerCompare(col, op string, e edges) ir.Pred {
	if n, ok := e.single(); ok {
		return &ir.Compare{Column: col, Op: op, Value: exactInt(n)}
	}
	if op == "<>" {
		return runPred(col, runOf("=", e), true)
	}
	return runPred(col, runOf(op, e), false)
}

// runPred is the condition that col lies in the run (or, negated, does
// not), in the plainest form: a comparison, a BETWEEN, or a comparison
// decided for every value.
func runPred(col string, r intRun, negate bool) ir.Pred {
	switch {
	case r.empty:
		return decided(col, ir.TypeInt, negate)
	case r.lo == math.MinInt64 && r.hi == math.MaxInt64:
		return decided(col, ir.TypeInt, !negate)
	case r.lo == math.MinInt64:
		return &ir.Compare{Column: col, Op: pick(negate, ">", "<="), Value: exactInt(r.hi)}
	case r.hi == math.MaxInt64:
		return &ir.Compare{Column: col, Op: pick(negate, "<", ">="), Value: exactInt(r.lo)}
	case r.lo == r.hi:
		return &ir.Compare{Column: col, Op: pick(negate, "<>", "="), Value: exactInt(r.lo)}
	}
	return &ir.Between{Column: col, Lo: exactInt(r.lo), Hi: exactInt(r.hi), Negate: negate}
}

func pick(negate bool, ifNegated, otherwise string) string {
	if negate {
		return ifNegated
	}
	return otherwise
}

func exactInt(n int64) ir.Literal { return ir.Literal{Kind: ir.LitInt, Int: n} }

// isDecimal reports whether l is a number kept as its exact decimal text
// (numberLiteral keeps a numeric so for arithmetic conditions).
func isDecimal(l ir.Literal) bool { return l.Kind == ir.LitFloat && l.Text != "" }

// exactDecimal is a decimal literal's exact value; ok is false when the
// literal is not one.
func exactDecimal(l ir.Literal) (*big.Rat, bool) {
	if !isDecimal(l) {
		return nil, false
	}
	return new(big.Rat).SetString(l.Text)
}

package mechanisms

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"countwall/config/keys"
)

// A perturbation table (the cell key method's "ptable") maps a true count and
// a position in [0, 1) to a noise value. Row i holds the noise distribution
// for true count i; the last row serves every count at or above its i. Each
// entry owns the half-open interval [lb, ub) of positions; the intervals of a
// row tile [0, 1), so every position picks exactly one entry and an entry is
// picked with probability ub-lb over uniformly distributed positions.
type ptable struct {
	name string
	rows []ptableRow // rows[k] is for count k+1
	maxV int64       // largest |v| in the table (the table's D)
}

type ptableRow struct {
	entries []ptableEntry // sorted by lb
}

type ptableEntry struct {
	v      int64   // noise: the published count is count+v
	p      float64 // probability
	lb, ub float64 // this entry's interval of positions
}

const (
	// ptableTolerance is how far a file's probabilities may stray from
	// summing to 1, and its interval bounds from the cumulative sums, to
	// allow for the decimals the R packages print.
	ptableTolerance = 1e-6
	// uniformMaxD bounds the uniform table's D: its small-count rows hold
	// O(D^2) entries, and noise beyond +-100 is a different regime.
	uniformMaxD = 100
)

// row returns the row for a true count >= 1: min(count, last row). Callers
// answer counts <= 0 themselves (zeros stay zero); the first row stands in
// for them here rather than indexing out of range.
func (t *ptable) row(count int64) *ptableRow {
	k := max(min(count, int64(len(t.rows)))-1, 0)
	return &t.rows[k]
}

// noise returns the noise for a true count >= 1 at position pos in [0, 1).
func (t *ptable) noise(count int64, pos float64) int64 {
	entries := t.row(count).entries
	// The first entry whose upper bound lies above pos; its lower bound is
	// the previous entry's upper bound, so it contains pos. Zero-width
	// entries (p = 0) are never chosen.
	k, _ := slices.BinarySearchFunc(entries, pos, func(e ptableEntry, x float64) int {
		if e.ub <= x {
			return -1
		}
		return 1
	})
	if k == len(entries) { // unreachable: the last upper bound is 1 > pos
		k = len(entries) - 1
	}
	return entries[k].v
}

// newPtableFromProbs builds a table from each row's noise values and
// probabilities: probabilities are normalised to sum to 1 and the intervals
// are their cumulative sums, ending exactly at 1.
func newPtableFromProbs(name string, rows [][]ptableEntry) (*ptable, error) {
	t := &ptable{name: name}
	for k, entries := range rows {
		total := 0.0
		for _, e := range entries {
			if !(e.p >= 0) || math.IsInf(e.p, 0) { // also refuses NaN
				return nil, fmt.Errorf("perturbation table %s row %d: probability %v is not a finite number >= 0", name, k+1, e.p)
			}
			total += e.p
		}
		if total <= 0 {
			return nil, fmt.Errorf("perturbation table %s row %d: probabilities sum to 0", name, k+1)
		}
		out := make([]ptableEntry, len(entries))
		cum := 0.0
		for j, e := range entries {
			p := e.p / total
			out[j] = ptableEntry{v: e.v, p: p, lb: cum, ub: cum + p}
			cum += p
		}
		out[len(out)-1].ub = 1
		t.rows = append(t.rows, ptableRow{entries: out})
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// validate checks what every table must satisfy whatever its source: at
// least one row, and no noise value that could publish a negative count
// (row i serves count i, and the last row every count above it too).
func (t *ptable) validate() error {
	if len(t.rows) == 0 {
		return fmt.Errorf("perturbation table %s: no rows for counts >= 1", t.name)
	}
	t.maxV = 0
	for k, r := range t.rows {
		i := int64(k + 1)
		for _, e := range r.entries {
			if e.ub <= e.lb {
				continue // never chosen
			}
			if i+e.v < 0 {
				return fmt.Errorf("perturbation table %s row i=%d: noise %d would publish a negative count", t.name, i, e.v)
			}
			t.maxV = max(t.maxV, e.v, -e.v)
		}
	}
	return nil
}

// uniformPtable is the model of Asghar-Kaafar section 3: noise uniform on
// -D..D. Row D (and every count above it) is exactly that. The rows for
// counts i < D are uniform on -i..D instead: the values below -i would
// publish a negative count, so they are left out rather than clamped (which
// would pile their mass onto 0). These small rows matter only when
// suppress_at < D; with the ABS-like default suppression (4 >= D = 2) they
// are never used.
func uniformPtable(d int64) (*ptable, error) {
	if d < 1 || d > uniformMaxD {
		return nil, fmt.Errorf("uniform perturbation table: D must be between 1 and %d, got %d", uniformMaxD, d)
	}
	rows := make([][]ptableEntry, d)
	for i := int64(1); i <= d; i++ {
		for v := -i; v <= d; v++ {
			rows[i-1] = append(rows[i-1], ptableEntry{v: v, p: 1})
		}
	}
	return newPtableFromProbs(fmt.Sprintf("uniform(D=%d)", d), rows)
}

// absExamplePtable is the example count table of the R ptable package
// (pt_ex_cnts: D=2, V=1.05, js=1), as used by the ABS-style cell key method.
// Row 4 serves every count >= 4.
func absExamplePtable() *ptable {
	e := func(v int64, p float64) ptableEntry { return ptableEntry{v: v, p: p} }
	t, err := newPtableFromProbs("abs_example", [][]ptableEntry{
		{e(-1, .50833333), e(1, .475), e(2, .01666667)},
		{e(-2, .16155827), e(0, .55565037), e(1, .24246618), e(2, .04032518)},
		{e(-1, .41231301), e(0, .28806097), e(1, .18693903), e(2, .11268699)},
		{e(-2, .07012498), e(-1, .24450007), e(0, .37074990), e(1, .24450007), e(2, .07012498)},
	})
	if err != nil {
		panic("mechanisms: built-in abs_example table is invalid: " + err.Error())
	}
	return t
}

// ptableCSVColumns are the columns the R packages (ptable, cellKey) write.
var ptableCSVColumns = []string{"i", "j", "p", "v", "p_int_lb", "p_int_ub"}

// loadPtableCSV reads a perturbation table written by the R packages:
// a header row naming at least the columns i (the true count), j (the
// perturbed count), p (the probability), v (the noise, j - i), p_int_lb and
// p_int_ub (the entry's interval of positions). Other columns are ignored,
// except `type`, which must be "all" (or empty) when present: tables split by
// even/odd counts are not supported. A row i=0 is allowed if it maps 0 to 0
// (zeros stay zero, as the cellkey mechanism always does), and rows i=1..I
// must all be present; row I serves every count >= I.
//
// The file's intervals are checked, not trusted: within each row they must
// start at 0, each must start where the previous one ended, they must end at
// 1, and each must be as wide as its probability, all to within 1e-6. The
// bounds are then snapped so that the intervals tile [0, 1) exactly.
func loadPtableCSV(path string) (*ptable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("perturbation table: %w", err)
	}
	defer f.Close()
	return parsePtableCSV(path, f)
}

// lineErrorf makes an error that names the table and the line.
type lineErrorf func(line int, format string, args ...any) error

// ptableCSVEntry is one parsed data line and where it came from.
type ptableCSVEntry struct {
	line int
	i, j int64
	ptableEntry
}

func parsePtableCSV(name string, r io.Reader) (*ptable, error) {
	lineErr := lineErrorf(func(line int, format string, args ...any) error {
		return fmt.Errorf("perturbation table %s line %d: %s", name, line, fmt.Sprintf(format, args...))
	})
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	col, err := readPtableHeader(name, cr, lineErr)
	if err != nil {
		return nil, err
	}
	byRow, maxI, err := readPtableEntries(name, cr, col, lineErr)
	if err != nil {
		return nil, err
	}
	return assemblePtable(name, byRow, maxI, lineErr)
}

// readPtableHeader reads the header line and returns each column's index,
// by lower-cased name.
func readPtableHeader(name string, cr *csv.Reader, lineErr lineErrorf) (map[string]int, error) {
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("perturbation table %s: the file is empty", name)
	}
	if err != nil {
		return nil, fmt.Errorf("perturbation table %s: %w", name, err)
	}
	col := map[string]int{}
	for k, h := range header {
		h = strings.ToLower(strings.Trim(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")), `"`))
		if _, dup := col[h]; dup && h != "" {
			return nil, lineErr(1, "column %q appears twice", h)
		}
		col[h] = k
	}
	for _, c := range ptableCSVColumns {
		if _, ok := col[c]; !ok {
			return nil, lineErr(1, "missing column %q (need %s)", c, strings.Join(ptableCSVColumns, ", "))
		}
	}
	return col, nil
}

// readPtableEntries reads every data line, grouped by true count i, and
// returns the largest i.
func readPtableEntries(name string, cr *csv.Reader, col map[string]int, lineErr lineErrorf) (map[int64][]ptableCSVEntry, int64, error) {
	byRow := map[int64][]ptableCSVEntry{}
	var maxI int64 = -1
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, 0, lineErr(pe.Line, "%v", pe.Err)
			}
			return nil, 0, fmt.Errorf("perturbation table %s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		e, err := parsePtableLine(rec, line, col, lineErr)
		if err != nil {
			return nil, 0, err
		}
		byRow[e.i] = append(byRow[e.i], e)
		maxI = max(maxI, e.i)
	}
	if maxI < 1 {
		return nil, 0, fmt.Errorf("perturbation table %s: no rows for counts >= 1", name)
	}
	return byRow, maxI, nil
}

// parsePtableLine reads one data line and checks it on its own: the
// intervals of a row are checked together by tilePtableRow.
func parsePtableLine(rec []string, line int, col map[string]int, lineErr lineErrorf) (ptableCSVEntry, error) {
	e := ptableCSVEntry{line: line}
	if typeCol, hasType := col["type"]; hasType {
		if t := strings.ToLower(strings.TrimSpace(rec[typeCol])); t != "" && t != "all" {
			return e, lineErr(line, "type %q is not supported (only \"all\": tables split by even and odd counts are not)", rec[typeCol])
		}
	}
	ints := []struct {
		name string
		dst  *int64
	}{{"i", &e.i}, {"j", &e.j}, {"v", &e.v}}
	for _, c := range ints {
		s := strings.TrimSpace(rec[col[c.name]])
		n, ok := keys.AsInt64(s)
		if !ok {
			return e, lineErr(line, "column %s: %q is not an integer", c.name, s)
		}
		*c.dst = n
	}
	floats := []struct {
		name string
		dst  *float64
	}{{"p", &e.p}, {"p_int_lb", &e.lb}, {"p_int_ub", &e.ub}}
	for _, c := range floats {
		s := strings.TrimSpace(rec[col[c.name]])
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return e, lineErr(line, "column %s: %q is not a number", c.name, s)
		}
		*c.dst = x
	}
	switch {
	case e.i < 0:
		return e, lineErr(line, "i = %d: counts are never negative", e.i)
	case e.j < 0:
		return e, lineErr(line, "j = %d: a perturbed count cannot be negative", e.j)
	case e.v != e.j-e.i:
		return e, lineErr(line, "v = %d but j - i = %d", e.v, e.j-e.i)
	case e.p < 0 || e.p > 1+ptableTolerance:
		return e, lineErr(line, "p = %v is not a probability", e.p)
	case e.lb > e.ub:
		return e, lineErr(line, "p_int_lb %v is above p_int_ub %v", e.lb, e.ub)
	case math.Abs((e.ub-e.lb)-e.p) > ptableTolerance:
		return e, lineErr(line, "interval [%v, %v) is %v wide but p = %v", e.lb, e.ub, e.ub-e.lb, e.p)
	}
	return e, nil
}

// assemblePtable builds the table from rows 0..maxI, each sorted, tiled and
// snapped.
func assemblePtable(name string, byRow map[int64][]ptableCSVEntry, maxI int64, lineErr lineErrorf) (*ptable, error) {
	// Check that rows 1..maxI are all present before allocating them, so a
	// stray huge i is an error rather than a huge allocation.
	for i := int64(1); i <= maxI; i++ {
		if _, ok := byRow[i]; !ok {
			return nil, fmt.Errorf("perturbation table %s: no lines for i = %d (rows 1..%d must all be present)", name, i, maxI)
		}
	}
	t := &ptable{name: name, rows: make([]ptableRow, maxI)}
	for i := int64(0); i <= maxI; i++ {
		entries, ok := byRow[i]
		if !ok { // only row 0 may be absent
			continue
		}
		// Order by interval; a zero-width entry sorts before the entry that
		// starts where it sits.
		slices.SortStableFunc(entries, func(a, b ptableCSVEntry) int {
			if c := cmp.Compare(a.lb, b.lb); c != 0 {
				return c
			}
			return cmp.Compare(a.ub, b.ub)
		})
		row, err := tilePtableRow(lineErr, i, entries)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			if slices.ContainsFunc(row.entries, func(e ptableEntry) bool { return e.v != 0 && e.ub > e.lb }) {
				return nil, lineErr(entries[0].line, "row i = 0 must map 0 to 0: zero counts are never perturbed")
			}
			continue
		}
		t.rows[i-1] = row
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// tilePtableRow checks that a row's intervals (sorted by lower bound) tile
// [0, 1) and its probabilities sum to 1, and snaps the bounds exactly.
func tilePtableRow(lineErr lineErrorf, i int64, entries []ptableCSVEntry) (ptableRow, error) {
	out := make([]ptableEntry, len(entries))
	prev, sum := 0.0, 0.0 // prev: where the previous (snapped) interval ends
	seenV := map[int64]int{}
	for k, e := range entries {
		if first, dup := seenV[e.v]; dup {
			return ptableRow{}, lineErr(e.line, "row i = %d lists noise v = %d twice (also on line %d)", i, e.v, first)
		}
		seenV[e.v] = e.line
		if math.Abs(e.lb-prev) > ptableTolerance {
			if k == 0 {
				return ptableRow{}, lineErr(e.line, "row i = %d: the first interval starts at %v, not 0", i, e.lb)
			}
			return ptableRow{}, lineErr(e.line, "row i = %d: interval starts at %v but the previous one ends at %v (intervals must tile [0, 1))", i, e.lb, prev)
		}
		// Snap: start exactly where the previous interval ended, and never
		// end before starting, so upper bounds never decrease and every
		// position in [0, 1) falls in exactly one interval.
		ub := max(e.ub, prev)
		out[k] = ptableEntry{v: e.v, p: e.p, lb: prev, ub: ub}
		prev = ub
		sum += e.p
	}
	last := entries[len(entries)-1]
	if math.Abs(prev-1) > ptableTolerance {
		return ptableRow{}, lineErr(last.line, "row i = %d: the last interval ends at %v, not 1 (intervals must tile [0, 1))", i, prev)
	}
	if math.Abs(sum-1) > ptableTolerance {
		return ptableRow{}, lineErr(last.line, "row i = %d: probabilities sum to %v, not 1", i, sum)
	}
	out[len(out)-1].ub = max(1, out[len(out)-1].lb)
	return ptableRow{entries: out}, nil
}

package snapshot

import (
	"cmp"
	"context"
	"countwall/planner/sqlgen"
	"database/sql"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// The snapshot is the store's fast path: an in-memory, dictionary-encoded copy
// of one protected table, read once in a single read transaction and labelled
// with SQLite's data_version at that moment. Queries are answered from it by
// evaluating the validated IR over per-row value codes with SQLite's own
// comparison rules; anything whose answer could differ from SQLite's (math,
// mixed storage classes where they matter, literals SQLite would convert) is
// declined and runs in SQLite instead. A full scan of a B-tree in SQLite costs
// about 80% of an answer; a scan of packed codes costs a small fraction of it.

// valueClass is a SQLite storage class, in SQLite's sort order.
type valueClass uint8

const (
	classNull valueClass = iota
	classInt
	classReal
	classText
	classBlob
)

// dictValue is one distinct stored value of a column.
type dictValue struct {
	class valueClass
	i     int64
	f     float64
	s     string // text, or the bytes of a blob
}

// compareDict orders values as SQLite's ORDER BY does with the BINARY
// collation: NULL, then numbers by value, then text bytewise, then blobs.
// Integers and reals compare exactly.
func compareDict(a, b dictValue) int {
	an, bn := a.class == classInt || a.class == classReal, b.class == classInt || b.class == classReal
	switch {
	case an && bn:
		return compareNumbers(a, b)
	case a.class == classNull || b.class == classNull:
		return cmp.Compare(a.class, b.class)
	case an != bn:
		if an {
			return -1
		}
		return 1
	case a.class != b.class:
		return cmp.Compare(a.class, b.class)
	}
	return strings.Compare(a.s, b.s)
}

// compareNumbers compares two numeric values exactly, as SQLite does for an
// integer against a real.
func compareNumbers(a, b dictValue) int {
	switch {
	case a.class == classInt && b.class == classInt:
		return cmp.Compare(a.i, b.i)
	case a.class == classReal && b.class == classReal:
		return cmp.Compare(a.f, b.f)
	case a.class == classInt:
		return compareIntReal(a.i, b.f)
	default:
		return -compareIntReal(b.i, a.f)
	}
}

// compareIntReal compares an integer with a (non-NaN) real without the
// rounding of a float64 conversion.
func compareIntReal(i int64, f float64) int {
	const two63 = 9223372036854775808.0
	switch {
	case f < -two63:
		return 1
	case f >= two63:
		return -1
	}
	t := int64(f) // truncated toward zero, exact for |f| < 2^63
	if c := cmp.Compare(i, t); c != 0 {
		return c
	}
	return cmp.Compare(float64(t), f) // i == trunc(f): only the fraction is left
}

// affinity is a column's SQLite type affinity (https://sqlite.org/datatype3.html, 3.1),
// which decides how a literal compared with it is converted.
type affinity uint8

const (
	affinityBlob affinity = iota // none
	affinityText
	affinityNumeric // INTEGER, REAL and NUMERIC alike for comparisons
)

func affinityOf(decl string) affinity {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "INT"):
		return affinityNumeric
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"):
		return affinityText
	case strings.Contains(d, "BLOB"), d == "":
		return affinityBlob
	}
	return affinityNumeric // REAL, FLOA, DOUB and everything else is NUMERIC or REAL
}

// snapColumn is one column of a snapshot.
type snapColumn struct {
	name     string
	affinity affinity
	values   []dictValue // distinct values, sorted as SQLite sorts them
	// Per row, the index of its value in values, in the narrowest width
	// that holds the dictionary: one of codes8, codes16, codes32 is set.
	codes8  []uint8
	codes16 []uint16
	codes32 []uint32
	build   []uint32 // the codes while the table is being read
	// unique is true when every non-NULL value occurs in exactly one row (a
	// table keyed by its unit): counting distinct units then needs no set.
	unique bool
	// prefix[code] is how many rows hold a smaller code, and rowsByCode
	// lists the rows by code (ascending within one): the rows holding codes
	// lo..hi-1 are rowsByCode[prefix[lo]:prefix[hi]].
	prefix     []int32
	rowsByCode []uint32
	nulls      bitset // rows holding NULL
	// Row sets that answer conditions a word (64 rows) at a time; see
	// snapshot_index.go.
	denseCodes []uint32 // frequent values' codes, ascending
	denseRows  []bitset // the rows holding each
	cutCodes   []uint32 // codes cutting the non-NULL rows into about equal bins
	cutRows    []bitset // the rows whose code is below each cut (nil: none)
	// Which storage classes occur, and whether every text is valid UTF-8:
	// the cases where the fast path could disagree with SQLite are declined.
	has [classBlob + 1]bool
	// realText is the text SQLite turns each real value into (by its bits),
	// which its LIKE matches: SQLite's own rendering, read with the table,
	// rather than a second implementation of its float formatting.
	realText map[uint64]string
	// collated marks a column declared with a collating sequence other
	// than BINARY: its conditions, groups and units are left to SQLite
	// (collation.go).
	collated bool
	// driverTime marks a column the SQLite driver reads as time.Time when it
	// is selected (declared DATE, DATETIME or TIMESTAMP): its groups are
	// rendered by SQLite's path so that they read the same.
	driverTime bool
	// groupings are how a GROUP BY reads the column as text (index 1) or as
	// a number (index 0), built at the first GROUP BY that needs each.
	groupingOnce [2]sync.Once
	groupings    [2]*grouping
}

// driverTimeTypes are the declared types whose values modernc.org/sqlite
// turns into time.Time.
var driverTimeTypes = map[string]bool{"DATE": true, "DATETIME": true, "TIMESTAMP": true}

// Table is one table read in one transaction.
type Table struct {
	table   string
	version int64 // PRAGMA data_version when it was read
	rows    int
	allRows bitset                 // every row, the mask of a query without WHERE
	columns map[string]*snapColumn // by lower-case name
	bytes   int64                  // estimated memory held

	keys atomic.Pointer[unitKeys] // record keys of the unit column, per secret
	// tallies holds, by column and unit column, *valueTallies: the per-value
	// figures that answer a one-condition COUNT without visiting rows.
	tallies sync.Map

	// byUnit is the unit column the rows are numbered in the order of (nil
	// when they keep the file's order): each unit's rows are then the run
	// unit.prefix[u]..unit.prefix[u+1]-1, so that a bounded count works per
	// run (see boundedCount).
	byUnit *snapColumn
	// runEndsAhead has bit i set where row i is the last of a non-NULL
	// unit's run: row i+1 begins the next unit's run or is past the last
	// row. The NULL rows' run is not marked; they are never counted.
	runEndsAhead bitset

	// orders holds the cell order of the last maxOrderShapes GROUP BY
	// shapes and secrets asked, the least recent first, for bounded counts
	// (cellOrder).
	ordersMu sync.Mutex
	orders   []keptOrder
}

// OnePerUnit reports whether every row has a unit and no two rows share one
// (a table keyed by its privacy unit). Contribution bounds then change no
// count, since no unit has more than one row or lands in more than one cell,
// and the snapshot's plain counts are the bounded ones.
func (snap *Table) OnePerUnit(unitColumn string) bool {
	unit := snap.columns[strings.ToLower(unitColumn)]
	return unit != nil && unit.unique && unit.nulls.count() == 0
}

// orderedFor reports whether the rows are numbered as a read for unit would
// number them: in its order when the table has such a column.
func (snap *Table) orderedFor(unit string) bool {
	c := snap.columns[strings.ToLower(unit)]
	return unit == "" || c == nil || c == snap.byUnit
}

// unitKeys caches the record key of every distinct value of one unit column
// under one secret: the keyed hash is paid once per unit, not once per query.
type unitKeys struct {
	column string
	secret string
	keys   []uint32 // by value code
}

// snapshotBuilder reads a table into dictionary-encoded columns.
type snapshotBuilder struct {
	cols  []*snapColumn
	dicts []map[dictValue]uint32
}

// readSnapshot reads every column of table t through conn in one read
// transaction and labels it with the data_version seen inside it, and
// numbers its rows in the order of the unit column when one is named. It
// fails when the snapshot would hold more than maxBytes.
// fileVersion, read inside the transaction, gives the label when the file is
// in rollback-journal mode; in WAL mode the label is walVersion, the
// data_version seen before the read began (see snapshots.version).
func readSnapshot(ctx context.Context, conn *sql.Conn, table, unit string, maxBytes int64, fileVersion func() int64, walVersion int64, progress func(rows int)) (*Table, error) {
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep or lose

	b := &snapshotBuilder{}
	names, err := b.readColumns(ctx, tx, table)
	if err != nil {
		return nil, err
	}

	rows, err := tx.QueryContext(ctx, "SELECT "+strings.Join(names, ", ")+" FROM "+sqlgen.QuoteIdent(table))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	vals := make([]any, len(b.cols))
	dest := make([]any, len(b.cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	n := 0
	var textBytes int64
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			textBytes += b.add(i, v)
		}
		n++
		if n%(1<<16) == 0 {
			if progress != nil {
				progress(n)
			}
			if est := estimateBytes(n, len(b.cols), textBytes); est > maxBytes {
				return nil, fmt.Errorf("table %q needs more than the snapshot limit of %d bytes", table, maxBytes)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The shared lock is still held, so no commit separates these labels
	// from the rows just read.
	version := fileVersion()
	if version < 0 {
		version = walVersion
	}
	snap := &Table{table: table, version: version, rows: n, allRows: everyRow(n), columns: map[string]*snapColumn{},
		bytes: estimateBytes(n, len(b.cols), textBytes)}
	if snap.bytes > maxBytes {
		return nil, fmt.Errorf("table %q needs more than the snapshot limit of %d bytes", table, maxBytes)
	}
	for i, c := range b.cols {
		b.finish(i, n)
		snap.columns[strings.ToLower(c.name)] = c
		if c.has[classReal] {
			if c.realText, err = readRealTexts(ctx, tx, table, c.name); err != nil {
				return nil, err
			}
		}
	}
	if u := snap.columns[strings.ToLower(unit)]; u != nil {
		snap.orderRowsBy(u)
	}
	snap.bytes = 8 * int64(len(snap.allRows)+len(snap.runEndsAhead))
	for _, c := range snap.columns {
		c.indexRows(n)
		snap.bytes += c.memory()
	}
	if snap.bytes > maxBytes { // the read checked an upper bound; this is what is held
		return nil, fmt.Errorf("table %q needs more than the snapshot limit of %d bytes", table, maxBytes)
	}
	return snap, nil
}

// orderRowsBy renumbers the rows in the order of the unit column's codes
// (the file's order within one unit), so that each unit's rows are one run
// of row numbers. The unit column's row lists are that order already.
func (snap *Table) orderRowsBy(unit *snapColumn) {
	order := slices.Clone(unit.rowsByCode) // new row number -> old
	for _, c := range snap.columns {
		c.permute(order)
	}
	snap.byUnit = unit
	snap.runEndsAhead = newBitset(snap.rows)
	for u := unit.firstNonNull() + 1; u <= uint32(len(unit.values)); u++ {
		snap.runEndsAhead.set(int(unit.prefix[u]) - 1)
	}
}

// permute renumbers the column's rows: new row i is old row order[i]. The
// row lists and NULL set follow; the dictionary and per-value counts do not
// change.
func (c *snapColumn) permute(order []uint32) {
	switch {
	case c.codes8 != nil:
		c.codes8 = permuted(c.codes8, order)
	case c.codes16 != nil:
		c.codes16 = permuted(c.codes16, order)
	default:
		c.codes32 = permuted(c.codes32, order)
	}
	c.nulls = newBitset(len(order))
	next := slices.Clone(c.prefix[:len(c.values)])
	for r := range order {
		code := c.code(r)
		if c.values[code].class == classNull {
			c.nulls.set(r)
		}
		c.rowsByCode[next[code]] = uint32(r)
		next[code]++
	}
}

func permuted[C uint8 | uint16 | uint32](codes []C, order []uint32) []C {
	out := make([]C, len(codes))
	for i, old := range order {
		out[i] = codes[old]
	}
	return out
}

// readRealTexts reads, in the snapshot's transaction, the text SQLite turns
// each real value of a column into, by the value's bits.
func readRealTexts(ctx context.Context, tx *sql.Tx, table, column string) (map[uint64]string, error) {
	col := "+" + sqlgen.QuoteIdent(column)
	rows, err := tx.QueryContext(ctx, "SELECT DISTINCT "+col+", CAST("+col+" AS TEXT) FROM "+sqlgen.QuoteIdent(table)+
		" WHERE typeof("+col+") = 'real'")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	texts := map[uint64]string{}
	for rows.Next() {
		var f float64
		var text string
		if err := rows.Scan(&f, &text); err != nil {
			return nil, err
		}
		texts[math.Float64bits(f)] = text
	}
	return texts, rows.Err()
}

// readColumns reads the table's declared columns into b and returns the
// select-list expressions that read their stored values.
func (b *snapshotBuilder) readColumns(ctx context.Context, tx *sql.Tx, table string) ([]string, error) {
	infos, err := tx.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	var names []string
	for infos.Next() {
		var name, decl string
		if err := infos.Scan(&name, &decl); err != nil {
			infos.Close()
			return nil, err
		}
		// Unary + keeps every value as stored but drops the declared type,
		// so the driver hands back the stored text of a DATE column rather
		// than its own time.Time reading of it.
		names = append(names, "+"+sqlgen.QuoteIdent(name))
		b.cols = append(b.cols, &snapColumn{name: name, affinity: affinityOf(decl),
			driverTime: driverTimeTypes[strings.ToUpper(decl)]})
		b.dicts = append(b.dicts, map[dictValue]uint32{})
	}
	if err := infos.Err(); err != nil {
		return nil, err
	}
	infos.Close()
	if len(b.cols) == 0 {
		return nil, fmt.Errorf("table %q is not in the protected database", table)
	}
	collated, err := collatedColumns(ctx, tx, table)
	if err != nil {
		return nil, err
	}
	for _, c := range b.cols {
		c.collated = collated[strings.ToLower(c.name)]
	}
	return names, nil
}

// estimateBytes is the most memory a snapshot can hold: per row and column
// four bytes of code, four of row list, six of row sets (32 frequent
// values' sets and 16 cuts' at most, a bit a row each) and two bits of NULL
// and match sets, plus the dictionaries (at most one entry per row and
// column, about 48 bytes each with its text).
func estimateBytes(rows, cols int, textBytes int64) int64 {
	return int64(rows)*int64(cols)*14 + int64(rows)*int64(cols)/4 + textBytes
}

// add encodes one value of column i and returns the bytes a new dictionary
// entry takes (0 when the value was seen before).
func (b *snapshotBuilder) add(i int, v any) int64 {
	c := b.cols[i]
	var d dictValue
	switch v := v.(type) {
	case nil:
		d.class = classNull
	case int64:
		d = dictValue{class: classInt, i: v}
	case float64:
		d = dictValue{class: classReal, f: v}
	case string:
		d = dictValue{class: classText, s: v}
	case []byte:
		d = dictValue{class: classBlob, s: string(v)}
	case bool: // the driver never returns one for stored data; kept for completeness
		d = dictValue{class: classInt}
		if v {
			d.i = 1
		}
	default:
		d = dictValue{class: classText, s: fmt.Sprint(v)}
	}
	code, ok := b.dicts[i][d]
	var added int64
	if !ok {
		code = uint32(len(c.values))
		b.dicts[i][d] = code
		c.values = append(c.values, d)
		c.has[d.class] = true
		added = 48 + int64(len(d.s))
	}
	c.build = append(c.build, code)
	return added
}

// finish sorts column i's dictionary into SQLite's order, recodes the rows
// and builds the NULL set.
func (b *snapshotBuilder) finish(i, rows int) {
	c := b.cols[i]
	order := make([]uint32, len(c.values))
	for j := range order {
		order[j] = uint32(j)
	}
	slices.SortFunc(order, func(x, y uint32) int { return compareDict(c.values[x], c.values[y]) })
	recode := make([]uint32, len(order))
	sorted := make([]dictValue, len(order))
	for newCode, old := range order {
		recode[old] = uint32(newCode)
		sorted[newCode] = c.values[old]
	}
	c.values = sorted
	c.nulls = newBitset(rows)
	perValue := make([]int32, len(sorted))
	for r, code := range c.build {
		code = recode[code]
		c.build[r] = code
		perValue[code]++
		if sorted[code].class == classNull {
			c.nulls.set(r)
		}
	}
	c.prefix = make([]int32, len(sorted)+1)
	for code, n := range perValue {
		c.prefix[code+1] = c.prefix[code] + n
	}
	c.rowsByCode = make([]uint32, rows)
	next := slices.Clone(c.prefix[:len(sorted)])
	for r, code := range c.build {
		c.rowsByCode[next[code]] = uint32(r)
		next[code]++
	}
	c.unique = true
	for code, n := range perValue {
		if n > 1 && sorted[code].class != classNull {
			c.unique = false
			break
		}
	}
	switch {
	case len(sorted) <= 1<<8:
		c.codes8 = narrow[uint8](c.build)
	case len(sorted) <= 1<<16:
		c.codes16 = narrow[uint16](c.build)
	default:
		c.codes32 = c.build
	}
	c.build = nil
	b.dicts[i] = nil
}

func narrow[C uint8 | uint16](codes []uint32) []C {
	out := make([]C, len(codes))
	for i, c := range codes {
		out[i] = C(c)
	}
	return out
}

// rows is how many rows the column holds.
func (c *snapColumn) rows() int { return len(c.codes8) + len(c.codes16) + len(c.codes32) }

// code is row r's value code.
func (c *snapColumn) code(r int) uint32 {
	switch {
	case c.codes8 != nil:
		return uint32(c.codes8[r])
	case c.codes16 != nil:
		return uint32(c.codes16[r])
	}
	return c.codes32[r]
}

// memory is the bytes the column holds: its codes, its NULL set, its row
// lists and sets, and its dictionary (about 48 bytes an entry beside its
// text).
func (c *snapColumn) memory() int64 {
	n := int64(len(c.codes8)) + 2*int64(len(c.codes16)) + 4*int64(len(c.codes32)) + 8*int64(len(c.nulls)) +
		4*int64(len(c.prefix)) + 4*int64(len(c.rowsByCode)) + 4*int64(len(c.denseCodes))
	for _, set := range append(c.denseRows, c.cutRows...) {
		n += 8 * int64(len(set))
	}
	n += 4 * int64(len(c.cutCodes))
	for _, v := range c.values {
		n += 48 + int64(len(v.s))
	}
	for _, text := range c.realText {
		n += 48 + int64(len(text))
	}
	return n
}

// bitset is a set of row numbers.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) count() (n int64) {
	for _, w := range b {
		n += int64(bits.OnesCount64(w))
	}
	return n
}

// each calls f for every row in the set, in ascending order.
func (b bitset) each(f func(row int)) {
	for wi, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			f(wi<<6 | t)
			w &= w - 1
		}
	}
}

package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"

	"countwall/pglex"
)

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

	rows, err := tx.QueryContext(ctx, "SELECT "+strings.Join(names, ", ")+" FROM "+pglex.QuoteIdentAlways(table))
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
	snap.bytes = 8*int64(len(snap.allRows)) + snap.runs.bytes()
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
	snap.runs = newUnitRuns(unit, snap.rows)
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
	col := "+" + pglex.QuoteIdentAlways(column)
	rows, err := tx.QueryContext(ctx, "SELECT DISTINCT "+col+", CAST("+col+" AS TEXT) FROM "+pglex.QuoteIdentAlways(table)+
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
		names = append(names, "+"+pglex.QuoteIdentAlways(name))
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

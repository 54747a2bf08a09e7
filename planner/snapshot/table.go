package snapshot

import (
	"countwall/ir"
	"strings"
	"sync"
	"sync/atomic"

	"countwall/planner/plan"
)

// The snapshot is the store's fast path: an in-memory, dictionary-encoded copy
// of one protected table, read once in a single read transaction and labelled
// with SQLite's data_version at that moment. Queries are answered from it by
// evaluating the validated IR over per-row value codes with SQLite's own
// comparison rules; anything whose answer could differ from SQLite's (math,
// mixed storage classes where they matter, literals SQLite would convert) is
// declined and runs in SQLite instead. A full scan of a B-tree in SQLite costs
// about 80% of an answer; a scan of packed codes costs a small fraction of it.

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
	// nullFree is whether nulls is empty, counted once (nullsOnce): every
	// statement on a table keyed by its unit asks.
	nullsOnce sync.Once
	nullFree  bool
	// Row sets that answer conditions a word (64 rows) at a time; see
	// rowsets.go.
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
	// planes are the row sets over the column's declared domain that the
	// oblivious evaluation answers its conditions from (planes.go), built
	// at the first that needs them.
	planesMu sync.Mutex
	planes   atomic.Pointer[domainIndex]
	// planesRefused is the domain whose planes the snapshot's budget
	// refused (maxPlaneSets).
	planesRefused atomic.Pointer[ir.Domain]
	// dictPlanes are the row sets over a byte-wide dictionary, codeSlices
	// a two-byte one's codes bit-sliced (dictplanes.go); dictRefused is set
	// when the budget refused them.
	dictPlanes  atomic.Pointer[dictPlanes]
	codeSlices  atomic.Pointer[domainRanks]
	dictRefused atomic.Bool
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
	// grids holds, by gridName, *keyGrid: the per-pair-of-values figures
	// that answer cellkey's counts on a table keyed by its unit (keygrid.go).
	grids      sync.Map
	gridBytes  atomic.Int64 // what the grids hold, at most bytes/gridShare
	planeSets  atomic.Int64 // the row sets the planes reserve, at most maxPlaneSets
	planeBytes atomic.Int64 // what the planes, ranks and code slices built hold

	// byUnit is the unit column the rows are numbered in the order of (nil
	// when they keep the file's order): each unit's rows are then the run
	// unit.prefix[u]..unit.prefix[u+1]-1, so that a bounded count works per
	// run (see boundedCount).
	byUnit *snapColumn
	// runs marks where each non-NULL unit's run begins and ends (nil when
	// byUnit is).
	runs *unitRuns

	// orders holds the cell order of the last maxOrderShapes GROUP BY
	// shapes and secrets asked, the least recent first, for bounded counts
	// (cellOrder).
	ordersMu sync.Mutex
	orders   []keptOrder
	// sumScratch is bounded sums' accumulators, kept between queries.
	sumScratch sumScratches
}

// OnePerUnit reports whether every row has a unit and no two rows share one
// (a table keyed by its privacy unit). Contribution bounds then change no
// count, since no unit has more than one row or lands in more than one cell,
// and the snapshot's plain counts are the bounded ones.
func (snap *Table) OnePerUnit(unitColumn string) bool {
	unit := snap.columns[strings.ToLower(unitColumn)]
	return unit != nil && unit.unique && unit.noNulls()
}

// noNulls reports whether no row holds NULL (the count is the same in any
// order of the rows, so it is kept across orderRowsBy).
func (c *snapColumn) noNulls() bool {
	c.nullsOnce.Do(func() { c.nullFree = c.nulls.count() == 0 })
	return c.nullFree
}

// orderedFor reports whether the rows are numbered as a read for unit would
// number them: in its order when the table has such a column.
func (snap *Table) orderedFor(unit string) bool {
	c := snap.columns[strings.ToLower(unit)]
	return unit == "" || c == nil || c == snap.byUnit
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

// firstNonNull is the first code that is not NULL (NULL sorts first).
func (c *snapColumn) firstNonNull() uint32 {
	if len(c.values) > 0 && c.values[0].class == classNull {
		return 1
	}
	return 0
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

// unitKeys caches the record key of every distinct value of one unit column
// under one secret: the keyed hash is paid once per unit, not once per query.
type unitKeys struct {
	column string
	secret string
	keys   []uint32 // by value code
	// words[i] is the sum of the keys of codes 64i..64i+63: on a table keyed
	// by its unit, where row r holds code r, the key of a bitset word's 64
	// rows (keysum.go).
	words []uint32
}

// unitKeys returns the record key of every value of the unit column under
// secret, computing them once per snapshot and secret.
func (snap *Table) unitKeys(unit *snapColumn, secret []byte) []uint32 {
	return snap.recordKeys(unit, secret).keys
}

// recordKeys is unitKeys with the keys' sums per 64 codes.
func (snap *Table) recordKeys(unit *snapColumn, secret []byte) *unitKeys {
	if k := snap.keys.Load(); k != nil && k.column == unit.name && k.secret == string(secret) {
		return k
	}
	// One more entry after the per-value keys holds their sum, the key of
	// the whole table when each unit is one row.
	k := &unitKeys{column: unit.name, secret: string(secret), keys: make([]uint32, len(unit.values)+1)}
	k.words = make([]uint32, (len(unit.values)+63)/64)
	for i, v := range unit.values {
		var val any
		switch v.class {
		case classNull:
			continue
		case classInt:
			val = v.i
		case classReal:
			val = v.f
		case classText:
			val = v.s
		default:
			val = []byte(v.s)
		}
		k.keys[i] = plan.RecordKey(secret, val)
		k.keys[len(unit.values)] += k.keys[i]
		k.words[i>>6] += k.keys[i]
	}
	snap.keys.Store(k)
	return k
}

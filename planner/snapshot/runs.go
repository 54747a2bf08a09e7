package snapshot

import "math/bits"

// unitRuns is where each unit's run of rows begins and ends once the rows
// are numbered in the unit's order (Table.orderRowsBy): the NULL unit's rows
// come first, rows 0 to from-1, and count for nothing; then each non-NULL
// unit's rows are one run.
type unitRuns struct {
	starts bitset // bit i: row i is the first of its unit's run
	ends   bitset // bit i: row i is the last of its unit's run
	from   int    // the first row of a non-NULL unit
}

// newUnitRuns marks the runs of unit's codes in a table of rows rows
// numbered in the unit's order.
func newUnitRuns(unit *snapColumn, rows int) *unitRuns {
	r := &unitRuns{starts: newBitset(rows), ends: newBitset(rows)}
	first := unit.firstNonNull()
	r.from = int(unit.prefix[first])
	for u := first; u < uint32(len(unit.values)); u++ {
		r.starts.set(int(unit.prefix[u]))
		r.ends.set(int(unit.prefix[u+1]) - 1)
	}
	return r
}

// bytes is what the marks hold (none for a table not in a unit's order).
func (r *unitRuns) bytes() int64 {
	if r == nil {
		return 0
	}
	return 8 * int64(len(r.starts)+len(r.ends))
}

// The kernels below take a unit's first matching rows, a round at a time,
// 64 rows a word operation. A round drops the lowest row of every run of
// rest by one subtraction: the run's start bit is subtracted from its rows
// with the run's last row set as a stop, so that the borrow clears the
// lowest row set at or above the start (the stop itself when none of the
// run's rows is set) and leaves the rows above it as they were. A run that
// goes on into the next word, without a row set in this one, borrows from
// it: the borrow out of the top row is carried to the next word's
// subtraction. Every word past the NULL unit's rows is visited whichever
// rows match, so the work follows the table and not the rows the condition
// holds on.

// dropLowest is one round on a word: rest without each run's lowest row,
// and the borrow into the next word. ends and starts are the word's run
// marks; borrow is the word before's.
func dropLowest(rest, ends, starts, borrow uint64) (uint64, uint64) {
	stopped := rest | ends
	d := stopped - starts - borrow
	return rest & d, (d &^ stopped) >> 63
}

// firstWord is where the kernels start: the words before it hold the NULL
// unit's rows only. The NULL rows in it need no mask: no run starts below
// them, so no borrow reaches them and a round never takes them.
func (r *unitRuns) firstWord() int { return r.from >> 6 }

// countFirst is how many of in's rows are among the first rounds (1 to 4)
// matching rows of their unit: the bounded COUNT's kernel, which keeps
// nothing.
func (r *unitRuns) countFirst(in bitset, rounds int) int64 {
	ends, starts := r.ends[:len(in)], r.starts[:len(in)]
	var b0, b1, b2, b3 uint64
	var taken int
	for w := r.firstWord(); w < len(in); w++ {
		m := in[w]
		e, u := ends[w], starts[w]
		rest, b := dropLowest(m, e, u, b0)
		b0 = b
		if rounds > 1 {
			rest, b1 = dropLowest(rest, e, u, b1)
			if rounds > 2 {
				rest, b2 = dropLowest(rest, e, u, b2)
				if rounds > 3 {
					rest, b3 = dropLowest(rest, e, u, b3)
				}
			}
		}
		taken += bits.OnesCount64(m &^ rest)
	}
	return int64(taken)
}

// takeFirst is countFirst that also counts the units with a matching row
// (units) and writes the rows it did not take to left (which may be in
// itself), for a C past four or a unit count.
// Its rounds are written out as countFirst's are, not shared through a
// method on the borrows: that kept them in memory, 15% slower a word.
func (r *unitRuns) takeFirst(in, left bitset, rounds int) (taken, units int64) {
	ends, starts, left := r.ends[:len(in)], r.starts[:len(in)], left[:len(in)]
	// The words before the first are left empty: a later pass or tallyRows
	// reads left whole.
	first := r.firstWord()
	clear(left[:first])
	var b0, b1, b2, b3 uint64
	var all, firsts int
	for w := first; w < len(in); w++ {
		m := in[w]
		e, u := ends[w], starts[w]
		rest, b := dropLowest(m, e, u, b0)
		b0 = b
		firsts += bits.OnesCount64(m &^ rest)
		if rounds > 1 {
			rest, b1 = dropLowest(rest, e, u, b1)
			if rounds > 2 {
				rest, b2 = dropLowest(rest, e, u, b2)
				if rounds > 3 {
					rest, b3 = dropLowest(rest, e, u, b3)
				}
			}
		}
		all += bits.OnesCount64(m &^ rest)
		left[w] = rest
	}
	return int64(all), int64(firsts)
}

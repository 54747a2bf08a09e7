package snapshot

import "math/bits"

// Contributor keys on a table keyed by its unit, where row r holds unit code
// r: the key of a row set is the sum of its rows' record keys (mod 2^32).
// The rows' keys are summed a word of the row set at a time, only where the
// word holds rows: a word holding most of its 64 rows is the word's total
// (unitKeys.words) less the keys of the rows it lacks, so no word costs more
// than 32 keys. Which words are visited, and how, follows the rows matched:
// this is the way of the mechanisms that claim no per-person loss (cellkey,
// layered), which alone ask for keys.

// keyedKeySum is the sum of the keys of the rows in set, keys by row (the
// unit's codes, with their total after them) and words their sums per 64.
func keyedKeySum(set bitset, keys, words []uint32) (key uint32) {
	last, tail := len(set)-1, lastWordMask(len(keys)-1)
	for wi, w := range set {
		if w == 0 {
			continue
		}
		base := wi << 6
		if bits.OnesCount64(w) > 32 {
			key += words[wi]
			w = ^w
			if wi == last {
				w &= tail
			}
			for ; w != 0; w &= w - 1 {
				key -= keys[base|bits.TrailingZeros64(w)]
			}
			continue
		}
		for ; w != 0; w &= w - 1 {
			key += keys[base|bits.TrailingZeros64(w)]
		}
	}
	return key
}

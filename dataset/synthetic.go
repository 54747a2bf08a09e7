package dataset

import (
	"context"
	"database/sql"
	"fmt"
)

// The Asghar-Kaafar synthetic column (Averaging attacks on bounded
// noise-based disclosure control algorithms, Appendix B): n = 600,000 samples
// of N(25, 5), each binned to the nearest integer bin among 1..51, stored as
// the value of an attribute whose public domain is 1..107, so that the values
// 52..107 have a count of 0. A sample nearer to a bin outside 1..51 (below
// 0.5 or from 51.5 up, a chance of about 5e-7 per row) goes to the nearest
// end bin, 1 or 51.
//
// The paper's own realisation of this recipe (its Table 4) is available
// through SyntheticOptions.PaperCounts. Its counts have mean 25.46 and
// standard deviation 5.31 rather than 25 and 5, and both end bins hold a
// count of 1, which suggests it was made as a 51-bin histogram over the range
// of the samples; rounding, as the paper describes, gives mean 25 and
// standard deviation 5.01.
const (
	SyntheticTableName   = "synthetic"
	DefaultSyntheticRows = 600_000
	SyntheticMean        = 25
	SyntheticSD          = 5
	SyntheticBinMin      = 1  // lowest bin
	SyntheticBinMax      = 51 // highest bin
	SyntheticDomainMin   = 1  // the attribute's public domain
	SyntheticDomainMax   = 107
)

// syntheticPaperCounts is Table 4 of the paper: the count of each value 1..51
// (values 52..107 have count 0). They add up to 600,000.
var syntheticPaperCounts = [SyntheticBinMax]int64{
	1, 3, 6, 12, 33, 53, 114, 199, 372, 677, 1075, 1837, 2884, 4388, 6496, 9136, 12694, 16893, 21513, 26566,
	31854, 36741, 40268, 43426, 44865, 44812, 43054, 40259, 35698, 31534, 26103, 20953, 16539, 12430, 8977, 6297, 4283, 2715, 1775, 1085,
	614, 377, 196, 93, 53, 24, 14, 3, 4, 1, 1,
}

// SyntheticPaperCounts returns the paper's Table 4: element i is the count of
// value i+1, for values 1..51.
func SyntheticPaperCounts() []int64 {
	return append([]int64(nil), syntheticPaperCounts[:]...)
}

// SyntheticTable describes the synthetic table with its public domain.
func SyntheticTable() Table {
	return Table{
		Name:        SyntheticTableName,
		PrivacyUnit: "id",
		UnitKeyed:   true,
		Columns: []Column{
			{Name: "id", Type: TypeInteger, Doc: "row number 1..rows: the privacy unit"},
			{Name: "value", Type: TypeInteger, HasRange: true, Min: SyntheticDomainMin, Max: SyntheticDomainMax,
				Doc: "N(25,5) rounded to 1..51; 52..107 are in the domain but never occur"},
		},
	}
}

// SyntheticOptions choose the synthetic column to generate.
type SyntheticOptions struct {
	Rows int64  // number of rows, at least 1; DefaultSyntheticRows in the paper
	Seed uint64 // the same seed and Rows give the same table
	// PaperCounts writes exactly the counts of the paper's Table 4 (so Rows
	// must be 600,000), in an order shuffled by Seed, instead of drawing
	// fresh samples: results can then be compared with the paper's Table 2
	// count for count.
	PaperCounts bool
}

const syntheticStream = 0x73796e7468 // "synth"

// GenerateSynthetic writes a new SQLite file at path holding the synthetic
// table (see SyntheticTable).
func GenerateSynthetic(ctx context.Context, path string, o SyntheticOptions, w WriteOptions) error {
	values, err := syntheticValues(o)
	if err != nil {
		return err
	}
	t := SyntheticTable()
	defs := []string{"id INTEGER PRIMARY KEY", "value INTEGER NOT NULL"}
	var i int64
	return buildNewFile(ctx, path, w.Force, generatedFileMode, func(ctx context.Context, db *sql.DB) error {
		return createAndFill(ctx, db, t, defs, o.Rows, w.Progress, func(row []any) error {
			row[0], row[1] = i+1, int64(values[i])
			i++
			return nil
		})
	})
}

// syntheticValues draws the whole column up front (one byte a row): the
// paper-counts variant must shuffle, and both variants then write alike.
func syntheticValues(o SyntheticOptions) ([]uint8, error) {
	if o.Rows < 1 {
		return nil, fmt.Errorf("synthetic: rows must be at least 1, got %d", o.Rows)
	}
	r := newRNG(o.Seed, syntheticStream)
	values := make([]uint8, o.Rows)
	if !o.PaperCounts {
		for i := range values {
			values[i] = uint8(clampRound(SyntheticMean+SyntheticSD*r.normal(), SyntheticBinMin, SyntheticBinMax))
		}
		return values, nil
	}
	if o.Rows != DefaultSyntheticRows {
		return nil, fmt.Errorf("synthetic: the paper's counts make exactly %d rows, not %d", DefaultSyntheticRows, o.Rows)
	}
	i := 0
	for v, count := range syntheticPaperCounts {
		for range count {
			values[i] = uint8(v + 1)
			i++
		}
	}
	for i := len(values) - 1; i > 0; i-- { // Fisher-Yates
		j := r.uint64n(uint64(i + 1))
		values[i], values[j] = values[j], values[i]
	}
	return values, nil
}

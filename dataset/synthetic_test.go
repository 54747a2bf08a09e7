package dataset

import (
	"context"
	"math"
	"path/filepath"
	"testing"
)

func genSynthetic(t *testing.T, o SyntheticOptions) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "synthetic.db")
	if err := GenerateSynthetic(context.Background(), path, o, WriteOptions{}); err != nil {
		t.Fatalf("GenerateSynthetic: %v", err)
	}
	return path
}

// histogram reads the count of each value of the synthetic column.
func histogram(t *testing.T, path string) map[int64]int64 {
	t.Helper()
	db := openReadOnly(t, path)
	res, err := db.Query("SELECT value, count(*) FROM synthetic GROUP BY value")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	h := map[int64]int64{}
	for res.Next() {
		var v, n int64
		if err := res.Scan(&v, &n); err != nil {
			t.Fatal(err)
		}
		h[v] = n
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestSyntheticConstants(t *testing.T) {
	if DefaultSyntheticRows != 600_000 || SyntheticBinMin != 1 || SyntheticBinMax != 51 ||
		SyntheticDomainMin != 1 || SyntheticDomainMax != 107 || SyntheticMean != 25 || SyntheticSD != 5 {
		t.Fatal("the synthetic constants no longer match the paper's Appendix B")
	}
	table := SyntheticTable()
	value, ok := table.Column("value")
	if table.Name != "synthetic" || table.PrivacyUnit != "id" || !ok ||
		!value.HasRange || value.Min != 1 || value.Max != 107 || value.Type != TypeInteger {
		t.Fatalf("SyntheticTable() = %+v, want table synthetic, unit id, value integer in 1..107", table)
	}
}

// The full-size column, as the paper made it: 600,000 rows of N(25,5)
// rounded to 1..51. With n = 600,000 the sample mean has standard error
// 5/sqrt(n) = 0.0065 and the sample standard deviation about
// 5/sqrt(2n) = 0.0046; the bounds below are over 6 standard errors wide, so
// a false failure has probability below 1e-8.
func TestSyntheticDistribution(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: the moments of a generated column: skipped under -short; go test ./... runs it")
	}
	path := genSynthetic(t, SyntheticOptions{Rows: DefaultSyntheticRows, Seed: 1})
	h := histogram(t, path)
	var n int64
	var sum, sumSq float64
	for v, c := range h {
		if v < SyntheticBinMin || v > SyntheticBinMax {
			t.Errorf("value %d (count %d) is outside 1..51", v, c)
		}
		n += c
		sum += float64(v * c)
		sumSq += float64(v * v * c)
	}
	if n != DefaultSyntheticRows {
		t.Fatalf("%d rows, want %d", n, DefaultSyntheticRows)
	}
	mean := sum / float64(n)
	sd := math.Sqrt(sumSq/float64(n) - mean*mean)
	if math.Abs(mean-25) > 0.04 {
		t.Errorf("mean %.4f, want 25 +- 0.04", mean)
	}
	// Rounding adds 1/12 to the variance: sd = sqrt(25 + 1/12) = 5.0083.
	if math.Abs(sd-5.0083) > 0.03 {
		t.Errorf("standard deviation %.4f, want 5.008 +- 0.03", sd)
	}
	// The middle bin: P(24.5 <= X < 25.5) = 0.07966, so about 47,796
	// (standard error 210).
	if c := h[25]; c < 46_500 || c > 49_100 {
		t.Errorf("count of 25 is %d, want 47,796 +- 1,300", c)
	}
}

func TestSyntheticDeterminism(t *testing.T) {
	o := SyntheticOptions{Rows: 20_000, Seed: 9}
	a, rows := dumpHash(t, genSynthetic(t, o), SyntheticTableName)
	b, _ := dumpHash(t, genSynthetic(t, o), SyntheticTableName)
	o.Seed = 10
	c, _ := dumpHash(t, genSynthetic(t, o), SyntheticTableName)
	if rows != 20_000 {
		t.Errorf("rows = %d, want 20000", rows)
	}
	if a != b {
		t.Errorf("same seed gave different rows")
	}
	if a == c {
		t.Errorf("seeds 9 and 10 gave the same rows")
	}
	// Pinned: a seed names the same column in every release.
	golden, _ := dumpHash(t, genSynthetic(t, SyntheticOptions{Rows: 1000, Seed: 1}), SyntheticTableName)
	const want = "4d69e6d6250eee0a04af22f976f9e5667e5e1d3bd203ab0d8bc14b47b5a7e1dd"
	if golden != want {
		t.Errorf("synthetic seed 1, 1000 rows: dump hash %s, want %s", golden, want)
	}
}

func TestSyntheticPaperCounts(t *testing.T) {
	paper := SyntheticPaperCounts()
	var total int64
	for _, c := range paper {
		total += c
	}
	if len(paper) != 51 || total != 600_000 {
		t.Fatalf("Table 4 has %d values adding up to %d, want 51 and 600,000", len(paper), total)
	}
	path := genSynthetic(t, SyntheticOptions{Rows: DefaultSyntheticRows, Seed: 5, PaperCounts: true})
	h := histogram(t, path)
	for v := int64(1); v <= SyntheticDomainMax; v++ {
		want := int64(0)
		if v <= SyntheticBinMax {
			want = paper[v-1]
		}
		if h[v] != want {
			t.Errorf("count of %d is %d, want %d (Table 4)", v, h[v], want)
		}
	}
	// The shuffle spreads values: the first 1,000 ids are not all one value.
	db := openReadOnly(t, path)
	var distinct int
	if err := db.QueryRow("SELECT count(DISTINCT value) FROM synthetic WHERE id <= 1000").Scan(&distinct); err != nil {
		t.Fatal(err)
	}
	if distinct < 15 {
		t.Errorf("the first 1,000 rows hold %d distinct values; the rows are not shuffled", distinct)
	}
}

func TestSyntheticRejectsBadOptions(t *testing.T) {
	cases := []SyntheticOptions{
		{Rows: 0},
		{Rows: -1},
		{Rows: 1000, PaperCounts: true},
	}
	for _, o := range cases {
		dir := t.TempDir()
		if err := GenerateSynthetic(context.Background(), filepath.Join(dir, "s.db"), o, WriteOptions{}); err == nil {
			t.Errorf("%+v: no error", o)
		}
		if got := dirEntries(t, dir); len(got) != 0 {
			t.Errorf("%+v: files left behind: %v", o, got)
		}
	}
}

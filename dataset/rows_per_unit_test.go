package dataset

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// The proposed bound is the smallest that counts at least KeepShare of the
// rows.
func TestRowsPerUnitOf(t *testing.T) {
	tests := []struct {
		name string
		hist []unitsWith
		want RowsPerUnit
	}{
		{"a row a unit", []unitsWith{{1, 40}}, RowsPerUnit{Rows: 40, Units: 40, Max: 1, Bound: 1, Kept: 40}},
		{"two kinds", []unitsWith{{5, 10}, {1, 10}}, RowsPerUnit{Rows: 60, Units: 20, Max: 5, Bound: 5, Kept: 60}},
		{"a long tail", []unitsWith{{1, 50}, {2, 30}, {3, 15}, {20, 1}}, RowsPerUnit{Rows: 175, Units: 96, Max: 20, Bound: 12, Kept: 167}},
		{"one heavy unit", []unitsWith{{1, 99}, {100, 1}}, RowsPerUnit{Rows: 199, Units: 100, Max: 100, Bound: 91, Kept: 190}},
		{"no rows", nil, RowsPerUnit{Bound: 1}},
	}
	for _, tt := range tests {
		if got := rowsPerUnitOf(tt.hist); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// A loaded table of several rows a person gets a max_rows_per_unit read
// from the data, marked for review with what it keeps and what it means; a
// table of a row a person gets none.
func TestLoadProposesMaxRowsPerUnit(t *testing.T) {
	var b strings.Builder
	b.WriteString("person,Visit Date\n")
	for p := 1; p <= 20; p++ {
		for v := 0; v < 1+p%4; v++ { // 1 to 4 rows a person: 50 in all
			b.WriteString("p" + string(rune('a'+p)) + ",d" + string(rune('0'+v)) + "\n")
		}
	}
	for _, tt := range []struct {
		name, csv, unit string
		want            []string
	}{
		{"several rows a person", b.String(), "person", []string{
			"    # REVIEW before analysts connect: max_rows_per_unit was read from the data (50\n    # rows of 20 units, 2.5 a unit on average, at most 4).",
			"with 1, the default, COUNT(*) counts\n    # units, not rows. 4 counts 100.0% of the rows (COUNT(*) is 50 of 50 before the\n",
			"    max_rows_per_unit: 4  # read from the data: REVIEW\n"}},
		{"a row a person", "id,age\n1,30\n2,40\n", "id", nil},
	} {
		dir := t.TempDir()
		c := LoadCommand{LoadOptions: LoadOptions{CSVPath: writeCSV(t, dir, tt.csv), DBPath: filepath.Join(dir, "t.db"), Table: "t", Unit: tt.unit}}
		var out, log strings.Builder
		res, err := c.Run(context.Background(), &out, &log)
		if err != nil {
			t.Fatal(err)
		}
		snippet := res.Table.ConfigSnippet()
		for _, w := range tt.want {
			if !strings.Contains(snippet, w) {
				t.Errorf("%s: the snippet lacks %q:\n%s", tt.name, w, snippet)
			}
		}
		if tt.want == nil && strings.Contains(snippet, "max_rows_per_unit") {
			t.Errorf("%s: a table of a row a person got a bound:\n%s", tt.name, snippet)
		}
		if !strings.Contains(out.String(), snippet) {
			t.Errorf("%s: load printed another entry than its table's:\n%s", tt.name, out.String())
		}
	}
}

package dataset

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rowsOf reads a loaded table back as text rows, in rowid order.
func rowsOf(t *testing.T, db, query string) []string {
	t.Helper()
	conn := openReadOnly(t, db)
	rows, err := conn.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			switch x := v.(type) {
			case []byte:
				parts[i] = string(x)
			default:
				parts[i] = fmt.Sprint(x)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out
}

// A file with no identifier gets a row number as its unit, by --add-id or
// --unit rownum; the semicolon and the quotes of a European statistics file
// are read as such.
func TestLoadAddsAnIDAndDetectsTheDelimiter(t *testing.T) {
	const semicolons = "region;\"label; with a semicolon\";value\nNorth;\"a \"\"quoted\"\" one\";3,5\nSouth;plain;4\n"
	for _, tc := range []struct {
		name      string
		csv       string
		o         LoadOptions
		delimiter rune
		columns   string
		rows      []string
	}{
		{"add-id, commas", "age,sex\n30,F\n41,M\n", LoadOptions{AddID: "person"}, ',', "person,age,sex", []string{"1|30|F", "2|41|M"}},
		{"unit rownum", "age,sex\n30,F\n41,M\n", LoadOptions{Unit: "rownum"}, ',', "rownum,age,sex", []string{"1|30|F", "2|41|M"}},
		{"semicolons and quotes", strings.Replace(semicolons, "\"label; with a semicolon\"", "label", 1), LoadOptions{AddID: "id"}, ';', "id,region,label,value",
			[]string{"1|North|a \"quoted\" one|3,5", "2|South|plain|4"}},
		{"tabs", "id\tage\n7\t30\n8\t41\n", LoadOptions{Unit: "id"}, '\t', "id,age", []string{"7|30", "8|41"}},
		{"a quoted semicolon does not count", "id,\"a;b;c\"\n1,x\n", LoadOptions{Unit: "id"}, ',', "id,a;b;c", []string{"1|x"}},
	} {
		dir := t.TempDir()
		o := tc.o
		o.CSVPath, o.DBPath, o.Table = writeCSV(t, dir, tc.csv), filepath.Join(dir, "out.db"), "t"
		res, err := LoadCSV(context.Background(), o)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if res.Delimiter != tc.delimiter || strings.Join(res.Table.ColumnNames(), ",") != tc.columns || res.Table.PrivacyUnit != strings.Split(tc.columns, ",")[0] {
			t.Errorf("%s: delimiter %q, columns %v, unit %s", tc.name, res.Delimiter, res.Table.ColumnNames(), res.Table.PrivacyUnit)
		}
		if got := rowsOf(t, o.DBPath, "SELECT * FROM t ORDER BY rowid"); strings.Join(got, "\n") != strings.Join(tc.rows, "\n") {
			t.Errorf("%s: rows %q, want %q", tc.name, got, tc.rows)
		}
		if len(res.Warnings) != 0 {
			t.Errorf("%s: warnings %v", tc.name, res.Warnings)
		}
	}
}

// Without an identifier the error says how to add one; a unit with far fewer
// distinct values than rows is loaded with a warning naming the column.
func TestLoadUnitHelp(t *testing.T) {
	_, _, err := load(t, "age,sex\n30,F\n", "person")
	if err == nil || !strings.Contains(err.Error(), "--add-id NAME (or --unit rownum)") {
		t.Errorf("missing unit: %v", err)
	}
	var b strings.Builder
	b.WriteString("id,age\n")
	for i := range 100 {
		b.WriteString(itoa(i) + "," + itoa(20+i%7) + "\n")
	}
	res, _, err := load(t, b.String(), "age")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "column age has 7 distinct values over 100 rows") {
		t.Errorf("warnings %q", res.Warnings)
	}
	if res, _, _ := load(t, b.String(), "id"); len(res.Warnings) != 0 {
		t.Errorf("a real identifier warned: %q", res.Warnings)
	}
	dir := t.TempDir()
	_, err = LoadCSV(context.Background(), LoadOptions{CSVPath: writeCSV(t, dir, "a\n1\n"), DBPath: filepath.Join(dir, "x.db"), Table: "t", Unit: "a", AddID: "id"})
	if err == nil || !strings.Contains(err.Error(), "disagree") {
		t.Errorf("--unit a with --add-id id: %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

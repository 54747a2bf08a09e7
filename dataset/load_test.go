package dataset

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeCSV(t *testing.T, dir, content string) string {
	t.Helper()
	path := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func load(t *testing.T, csvText, unit string) (LoadResult, string, error) {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "out.db")
	res, err := LoadCSV(context.Background(), LoadOptions{
		CSVPath: writeCSV(t, dir, csvText), DBPath: db, Table: "t", Unit: unit,
	})
	return res, db, err
}

func TestClassify(t *testing.T) {
	cases := []struct {
		in   string
		want valueKind
	}{
		{"0", kindInteger},
		{"42", kindInteger},
		{"-7", kindInteger},
		{"+7", kindInteger},
		{"9223372036854775807", kindInteger},
		{"9223372036854775808", kindText}, // past int64: keep the digits
		{"1.5", kindReal},
		{"-0.25", kindReal},
		{"0.5", kindReal},
		{"1e3", kindReal},
		{".5", kindReal},
		{"02134", kindText}, // a code with a leading zero
		{"-007", kindText},
		{"00.5", kindText},
		{"0x1F", kindText},
		{"inf", kindText},
		{"NaN", kindText},
		{"1e400", kindText}, // overflows to infinity
		{"1_000", kindText},
		{"e", kindText},
		{".", kindText},
		{"12abc", kindText},
		{"F", kindText},
	}
	for _, c := range cases {
		if got := classify(c.in); got != c.want {
			t.Errorf("classify(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestLoadInfersTypes(t *testing.T) {
	csvText := "id,n,x,mixed,code,name,empty,big\n" +
		"1,10,1.5,3,007,alice,,1\n" +
		"2, 20 ,2,3.5,010,bob,,99999999999999999999\n" +
		"3,,-1e2,x,,\"c, d\",,2\n"
	res, _, err := load(t, csvText, "id")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"id": TypeInteger, "n": TypeInteger, "x": TypeReal, "mixed": TypeText,
		"code": TypeText, "name": TypeText, "empty": TypeText, "big": TypeText,
	}
	if len(res.Table.Columns) != len(want) {
		t.Fatalf("%d columns, want %d", len(res.Table.Columns), len(want))
	}
	for _, c := range res.Table.Columns {
		if c.Type != want[c.Name] {
			t.Errorf("column %s: type %s, want %s", c.Name, c.Type, want[c.Name])
		}
		if c.HasDomain() {
			t.Errorf("column %s: a domain was made up from the data", c.Name)
		}
	}
	if res.Rows != 3 || !res.CreatedFile || res.Table.PrivacyUnit != "id" || res.Table.Name != "t" {
		t.Errorf("result %+v: want 3 rows, a new file, unit id, table t", res)
	}
}

// Every value comes back with the type and content it was given, and empty
// or blank fields come back as NULL.
func TestLoadRoundTrip(t *testing.T) {
	csvText := "\ufeffid,age,score,city,note\n" +
		"1,34,0.5,Sydney,\"said \"\"hi\"\"\"\n" +
		"2,,1.25,  Perth ,\n" +
		"3,71,,\"\",\"two\nlines\"\n" +
		"3,5,-2,   ,x\n"
	res, dbPath, err := load(t, csvText, "ID")
	if err != nil {
		t.Fatal(err)
	}
	if res.Table.PrivacyUnit != "id" {
		t.Errorf("privacy unit %q, want the header's spelling id", res.Table.PrivacyUnit)
	}
	db := openReadOnly(t, dbPath)
	rows, err := db.Query("SELECT id, age, typeof(age), score, typeof(score), city, typeof(city), note FROM t ORDER BY rowid")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type row struct {
		id       int64
		age      sql.NullInt64
		ageType  string
		score    sql.NullFloat64
		scType   string
		city     sql.NullString
		cityType string
		note     sql.NullString
	}
	want := []row{
		{1, sql.NullInt64{Int64: 34, Valid: true}, "integer", sql.NullFloat64{Float64: 0.5, Valid: true}, "real", sql.NullString{String: "Sydney", Valid: true}, "text", sql.NullString{String: `said "hi"`, Valid: true}},
		{2, sql.NullInt64{}, "null", sql.NullFloat64{Float64: 1.25, Valid: true}, "real", sql.NullString{String: "  Perth ", Valid: true}, "text", sql.NullString{}},
		{3, sql.NullInt64{Int64: 71, Valid: true}, "integer", sql.NullFloat64{}, "null", sql.NullString{}, "null", sql.NullString{String: "two\nlines", Valid: true}},
		{3, sql.NullInt64{Int64: 5, Valid: true}, "integer", sql.NullFloat64{Float64: -2, Valid: true}, "real", sql.NullString{}, "null", sql.NullString{String: "x", Valid: true}},
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.age, &r.ageType, &r.score, &r.scType, &r.city, &r.cityType, &r.note); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n got %+v\nwant %+v", got, want)
	}
	info, err := os.Stat(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != importedFileMode {
		t.Errorf("imported file mode %v, want %v: the data may be sensitive", info.Mode().Perm(), importedFileMode)
	}
}

// Bad input is refused before anything is written, with the error naming
// what is wrong and where.
func TestLoadRefusesBadInput(t *testing.T) {
	cases := []struct {
		name, csv, unit string
		wantInErr       []string
	}{
		{"missing unit column", "a,b\n1,2\n", "person", []string{`"person"`, "a, b"}},
		{"no unit given", "a,b\n1,2\n", "", []string{"the columns are a, b"}},
		{"too many fields", "id,v\n1,2\n2,3\n3,4,5\n", "id", []string{"line 4", "header has 2"}},
		{"too few fields", "id,v\n1,2\n2\n", "id", []string{"line 3", "wrong number of fields"}},
		{"bare quote", "id,v\n1,2\n2,ab\"c\n", "id", []string{"line 3", "bare"}},
		{"unclosed quote", "id,v\n1,2\n2,\"abc\n3,4\n", "id", []string{"starts on line 3", "quote"}},
		{"empty unit", "id,v\n1,a\n,b\n", "id", []string{"line 3", "privacy-unit column id is empty"}},
		{"duplicate column", "id,Age,age\n1,2,3\n", "id", []string{"age appears twice"}},
		{"dotted column name", "id,a.b\n1,2\n", "id", []string{`column name "a.b" holds a dot`, `"a_b"`}},
		{"control character", "id,a\x01b\n1,2\n", "id", []string{`column name "a\x01b" holds a control character`}},
		{"blank column name", "id, \n1,2\n", "id", []string{"name is empty"}},
		{"empty column name", "id,\n1,2\n", "id", []string{"name is empty"}},
		{"empty file", "", "id", []string{"header row"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			csvPath := writeCSV(t, dir, c.csv)
			_, err := LoadCSV(context.Background(), LoadOptions{
				CSVPath: csvPath, DBPath: filepath.Join(dir, "out.db"), Table: "t", Unit: c.unit,
			})
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range c.wantInErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if got := dirEntries(t, dir); !slices.Equal(got, []string{"in.csv"}) {
				t.Errorf("directory holds %v: something was written", got)
			}
		})
	}
}

func TestLoadRefusesBadTableName(t *testing.T) {
	for _, name := range []string{"", " t", "my.table", "sqlite_stat1"} {
		dir := t.TempDir()
		_, err := LoadCSV(context.Background(), LoadOptions{
			CSVPath: writeCSV(t, dir, "id\n1\n"), DBPath: filepath.Join(dir, "out.db"), Table: name, Unit: "id",
		})
		if err == nil {
			t.Errorf("table name %q: no error", name)
		}
	}
}

func tableNames(t *testing.T, dbPath string) []string {
	t.Helper()
	db := openReadOnly(t, dbPath)
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

// Into an existing database: a second table is added beside the first; the
// same name is refused unless Replace; a malformed file leaves the database
// as it was.
func TestLoadIntoExistingDatabase(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "owner.db")
	opts := func(csvText, table string, replace bool) LoadOptions {
		p := filepath.Join(dir, table+".csv")
		if err := os.WriteFile(p, []byte(csvText), 0o644); err != nil {
			t.Fatal(err)
		}
		return LoadOptions{CSVPath: p, DBPath: dbPath, Table: table, Unit: "id", Replace: replace}
	}
	ctx := context.Background()

	if _, err := LoadCSV(ctx, opts("id,v\n1,a\n2,b\n", "first", false)); err != nil {
		t.Fatal(err)
	}
	res, err := LoadCSV(ctx, opts("id,w\n1,10\n", "second", false))
	if err != nil {
		t.Fatal(err)
	}
	if res.CreatedFile {
		t.Error("CreatedFile is true for an existing database")
	}
	if got := tableNames(t, dbPath); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("tables %v, want first and second", got)
	}

	_, err = LoadCSV(ctx, opts("id,w\n5,50\n", "FIRST", false))
	if !errors.Is(err, ErrTableExists) || !strings.Contains(err.Error(), "already has a table named first") {
		t.Fatalf("same name without Replace: err = %v", err)
	}

	_, err = LoadCSV(ctx, opts("id,w\n5,50\n6,60,7\n", "first", true))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("malformed replacement: err = %v", err)
	}
	if h, rows := dumpHash(t, dbPath, "first"); rows != 2 {
		t.Fatalf("after a failed replace, first has %d rows (%s), want the original 2", rows, h)
	}

	if _, err := LoadCSV(ctx, opts("id,w\n5,50\n6,60\n7,70\n", "first", true)); err != nil {
		t.Fatalf("Replace: %v", err)
	}
	if _, rows := dumpHash(t, dbPath, "first"); rows != 3 {
		t.Errorf("after Replace, first has %d rows, want 3", rows)
	}
	if got := tableNames(t, dbPath); !slices.Equal(got, []string{"first", "second"}) {
		t.Errorf("tables %v, want first and second", got)
	}
	var entries []string
	for _, name := range dirEntries(t, dir) {
		if strings.HasSuffix(name, ".db") || strings.Contains(name, ".db") {
			entries = append(entries, name)
		}
	}
	if !slices.Equal(entries, []string{"owner.db"}) {
		t.Errorf("database files %v, want only owner.db (no journal or temporary left)", entries)
	}
}

func TestLoadIntoNonDatabaseFile(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "notes.txt")
	content := strings.Repeat("these are not SQLite pages\n", 200)
	if err := os.WriteFile(dbPath, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadCSV(context.Background(), LoadOptions{
		CSVPath: writeCSV(t, dir, "id\n1\n"), DBPath: dbPath, Table: "t", Unit: "id",
	})
	if err == nil {
		t.Fatal("no error loading into a file that is not a database")
	}
	if b, _ := os.ReadFile(dbPath); string(b) != content {
		t.Error("the file that is not a database was changed")
	}
}

func TestLoadProgressAndCancel(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,v\n")
	for i := range 2000 {
		b.WriteString(strings.Repeat("1", 1+i%3) + ",x\n")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last int64
	_, err := LoadCSV(ctx, LoadOptions{
		CSVPath: writeCSV(t, dir, b.String()), DBPath: filepath.Join(dir, "out.db"), Table: "t", Unit: "id",
		Progress: func(done, total int64) {
			if total != 2000 || done < last {
				t.Errorf("progress (%d, %d) after %d", done, total, last)
			}
			last = done
			if done >= 512 {
				cancel()
			}
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"in.csv"}) {
		t.Errorf("directory holds %v after a cancelled load", got)
	}
}

package dataset

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"countwall/config"
)

// Header names are stored in lower case, as the firewall's SQL and config
// read names, and the result says which ones changed.
func TestLoadLowersNames(t *testing.T) {
	res, dbPath, err := load(t, "ID,Default,age\n1,no,30\n2,yes,40\n", "id")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Table.ColumnNames(); !slices.Equal(got, []string{"id", "default", "age"}) {
		t.Errorf("columns %v, want id, default, age", got)
	}
	if res.Table.PrivacyUnit != "id" || !slices.Equal(res.Lowered, []string{"ID", "Default"}) {
		t.Errorf("unit %q, lowered %v", res.Table.PrivacyUnit, res.Lowered)
	}
	db := openReadOnly(t, dbPath)
	var name string
	if err := db.QueryRow("SELECT name FROM pragma_table_info('t') WHERE cid = 1").Scan(&name); err != nil || name != "default" {
		t.Errorf("stored column name %q, %v; want default", name, err)
	}
	if got := res.Table.QuotedNames(); !slices.Equal(got, []string{`"default"`}) {
		t.Errorf("names to quote %v, want [\"default\"]", got)
	}
}

// A table whose names are SQL reserved words or YAML keywords gives a
// snippet that loads back as itself and says how to name the reserved ones
// in queries.
func TestConfigSnippetAwkwardNames(t *testing.T) {
	table := Table{Name: "survey", PrivacyUnit: "id", Columns: []Column{
		{Name: "id", Type: TypeInteger},
		{Name: "default", Type: TypeText, Categories: []string{"no", "yes"}},
		{Name: "order", Type: TypeInteger, Min: 0, Max: 2, HasRange: true},
		{Name: "yes", Type: TypeText, Categories: []string{"a"}},
		{Name: "true", Type: TypeText},
		{Name: "null", Type: TypeText},
		{Name: "on", Type: TypeInteger, Min: 1, Max: 3, HasRange: true},
	}}
	snippet := table.ConfigSnippet()
	if !strings.Contains(snippet, `    # In SQL, write "default", "order", "true", "null", "on" in double quotes, as here (SELECT COUNT(*) FROM survey WHERE "default" = ...);
    # here in the config they are named without the quotes.`) {
		t.Errorf("snippet does not warn about the reserved names:\n%s", snippet)
	}
	path := filepath.Join(t.TempDir(), "countwall.yaml")
	if err := os.WriteFile(path, []byte("database: protected.db\n"+snippet), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatalf("snippet does not load: %v\n%s", err, snippet)
	}
	got := cfg.Tables["survey"]
	if got.PrivacyUnit != "id" || !slices.Equal(got.Columns, table.ColumnNames()) {
		t.Fatalf("snippet loads as %+v\n%s", got, snippet)
	}
	if d := got.Domains["default"]; d == nil || !slices.Equal(d.Categories, []string{"no", "yes"}) {
		t.Errorf("default's domain loads as %+v", d)
	}
	if d := got.Domains["order"]; d == nil || d.Min != 0 || d.Max != 2 {
		t.Errorf("order's domain loads as %+v", d)
	}
	if d := got.Domains["yes"]; d == nil || !slices.Equal(d.Categories, []string{"a"}) {
		t.Errorf("yes's domain loads as %+v", d)
	}
	if d := got.Domains["on"]; d == nil || d.Min != 1 || d.Max != 3 {
		t.Errorf("on's domain loads as %+v", d)
	}
}

// One rule for table and column names, whatever reads them: spaces,
// punctuation and reserved words are kept and listed quoted, as the analyst
// types them; an empty name, blanks at an end, a dot or a control
// character are refused.
func TestCheckNameAndQuotedNames(t *testing.T) {
	tests := []struct {
		name   string
		err    string // "" when accepted
		quoted string // as QuotedNames lists the column, "" when plain
	}{
		{"age", "", ""},
		{"visit date", "", `"visit date"`},
		{"default", "", `"default"`},
		{"2nd", "", `"2nd"`},
		{`say "hi"`, "", `"say ""hi"""`},
		{"a;b", "", `"a;b"`},
		{"", "the column name is empty", ""},
		{" age", `column name " age" begins or ends with a blank; remove it`, ""},
		{"a.b", `column name "a.b" holds a dot, which the config reads as a key separator; rename it (e.g. "a_b")`, ""},
		{"a\tb", `column name "a\tb" holds a control character`, ""},
	}
	for _, tt := range tests {
		err := CheckName("column", tt.name)
		if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("CheckName(%q) = %v, want %q", tt.name, err, tt.err)
		}
		if tt.err != "" {
			continue
		}
		table := Table{Name: "t", Columns: []Column{{Name: tt.name}}}
		want := []string(nil)
		if tt.quoted != "" {
			want = []string{tt.quoted}
		}
		if got := table.QuotedNames(); !slices.Equal(got, want) {
			t.Errorf("QuotedNames of %q = %q, want %q", tt.name, got, want)
		}
	}
}

// A CSV header with a space loads; the note says how to type the name.
func TestLoadKeepsANameWithASpace(t *testing.T) {
	res, _, err := load(t, "id,Visit Date\n1,2024-01-02\n", "id")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Table.ColumnNames(); !slices.Equal(got, []string{"id", "visit date"}) {
		t.Errorf("columns %q", got)
	}
	if got, want := res.Table.QuotingNote(), `in SQL, write "visit date" in double quotes, as here (SELECT COUNT(*) FROM t WHERE "visit date" = ...)`; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}

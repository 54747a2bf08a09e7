package dataset

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"countwall/config"
)

func TestConfigSnippetExact(t *testing.T) {
	table := Table{
		Name: "visits", PrivacyUnit: "patient",
		Columns: []Column{
			{Name: "patient", Type: TypeInteger},
			{Name: "ward", Type: TypeText, Categories: []string{"A", "no", "it's \"x\""}},
			{Name: "age", Type: TypeInteger, HasRange: true, Min: 0, Max: 120, Doc: "age in years"},
			{Name: "cost", Type: TypeReal},
		},
	}
	want := `tables:
  visits:
    privacy_unit: patient
    columns: [patient, ward, age, cost]
    domains:
      ward: ["A", "no", "it's \"x\""]
      age: {min: 0, max: 120}  # age in years
    # No domain for: cost. Add one (col: [categories] or col: {min: A, max: B})
    # only from public knowledge of what the values can be, never from the values in
    # the data, which would disclose which ones occur. GROUP BY under a differentially
    # private mechanism needs a declared domain.
`
	if got := table.ConfigSnippet(); got != want {
		t.Errorf("ConfigSnippet:\n%s\nwant:\n%s", got, want)
	}
}

// The snippets load through the real config loader as the tables they
// describe, the 1,000 suburbs included.
func TestConfigSnippetLoads(t *testing.T) {
	for _, table := range []Table{PeopleTable(), SyntheticTable()} {
		t.Run(table.Name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "countwall.yaml")
			body := "database: protected.db\n" + table.ConfigSnippet()
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path, nil)
			if err != nil {
				t.Fatalf("snippet does not load: %v", err)
			}
			got, ok := cfg.Tables[table.Name]
			if !ok || got.PrivacyUnit != table.PrivacyUnit || !slices.Equal(got.Columns, table.ColumnNames()) {
				t.Fatalf("snippet loads as %+v", cfg.Tables)
			}
			for _, c := range table.Columns {
				d := got.Domains[c.Name]
				switch {
				case c.HasRange:
					if d == nil || !d.IsRange || d.Min != c.Min || d.Max != c.Max {
						t.Errorf("%s: range domain loads as %+v, want %d..%d", c.Name, d, c.Min, c.Max)
					}
				case c.Categories != nil:
					if d == nil || !slices.Equal(d.Categories, c.Categories) {
						t.Errorf("%s: categories do not load back", c.Name)
					}
				case d != nil:
					t.Errorf("%s: a domain appeared from nowhere", c.Name)
				}
			}
		})
	}
}

func TestPeopleTableDomains(t *testing.T) {
	table := PeopleTable()
	sizes := map[string]int64{}
	for _, c := range table.Columns {
		switch {
		case c.HasRange:
			sizes[c.Name] = c.Max - c.Min + 1
		default:
			sizes[c.Name] = int64(len(c.Categories))
		}
	}
	want := map[string]int64{
		"id": 0, "age": 101, "sex": 2, "suburb": 1000, "zip": 250, "income": 500_001,
		"education": 8, "marital": 5, "occupation": 12, "hours": 99, "secret": 2,
	}
	if len(sizes) != len(want) {
		t.Fatalf("columns %v, want %v", sizes, want)
	}
	for name, n := range want {
		if sizes[name] != n {
			t.Errorf("%s: domain size %d, want %d", name, sizes[name], n)
		}
	}
	if suburb, _ := table.Column("SUBURB"); suburb.Categories[0] != "suburb_0001" || suburb.Categories[999] != "suburb_1000" {
		t.Errorf("suburbs run %s..%s, want suburb_0001..suburb_1000", suburb.Categories[0], suburb.Categories[999])
	}
}

package starter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"countwall/dataset"
)

// loadCSV imports body as table t of a new database in dir.
func loadCSV(t *testing.T, dir, body string) string {
	t.Helper()
	csv, db := filepath.Join(dir, "t.csv"), filepath.Join(dir, "t.db")
	if err := os.WriteFile(csv, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.LoadCSV(context.Background(), dataset.LoadOptions{CSVPath: csv, DBPath: db, Table: "t", Unit: "id"}); err != nil {
		t.Fatal(err)
	}
	return db
}

// The table is read as declared; integer columns get their range, text
// columns of at most MaxCategories values their sorted values, each marked
// for review; a text column with more values, an integer range over
// MaxRangeValues wide, a real column and the unit get none.
func TestReadTableAndObserveDomains(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,n,c,many,r,wide\n")
	for i := 1; i <= MaxCategories+1; i++ {
		fmt.Fprintf(&b, "%d,%d,%s,v%03d,%d.5,%d\n", i, i*10-300, []string{"b", "a", "c"}[i%3], i, i, i*MaxRangeValues/50)
	}
	db := loadCSV(t, t.TempDir(), b.String())
	table, err := ReadTable(context.Background(), db, "t", "id")
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{dataset.TypeInteger, dataset.TypeInteger, dataset.TypeText, dataset.TypeText, dataset.TypeReal, dataset.TypeInteger}
	for i, c := range table.Columns {
		if c.Type != wantTypes[i] {
			t.Errorf("column %s: type %s, want %s", c.Name, c.Type, wantTypes[i])
		}
	}
	if !table.UnitKeyed || table.PrivacyUnit != "id" {
		t.Errorf("unit %q keyed %v, want id keyed", table.PrivacyUnit, table.UnitKeyed)
	}
	got, observed, err := ObserveDomains(context.Background(), db, table)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(observed, []string{"n", "c"}) {
		t.Errorf("observed %v, want [n c]", observed)
	}
	n, _ := got.Column("n")
	c, _ := got.Column("c")
	if !n.HasRange || n.Min != -290 || n.Max != 210 || n.Doc != ReviewMark {
		t.Errorf("n: %+v, want -290..210 marked for review", n)
	}
	if !reflect.DeepEqual(c.Categories, []string{"a", "b", "c"}) || c.Doc != ReviewMark {
		t.Errorf("c: %+v, want [a b c] marked for review", c)
	}
	for _, name := range []string{"id", "many", "r", "wide"} {
		if col, _ := got.Column(name); col.HasDomain() {
			t.Errorf("%s got a domain: %+v", name, col)
		}
	}
	if _, err := ReadTable(context.Background(), db, "t", "nope"); err == nil || !strings.Contains(err.Error(), `no column "nope"`) {
		t.Errorf("unknown unit: %v", err)
	}
	if _, err := ReadTable(context.Background(), db, "nope", "id"); err == nil || !strings.Contains(err.Error(), `no table "nope"`) {
		t.Errorf("unknown table: %v", err)
	}
}

// What a written config allows is printed with it: the answers the cap
// buys at the default share under the mechanism in force, and the grant
// that adds to it; a mechanism that charges nothing says so.
func TestPrintAllowance(t *testing.T) {
	tests := []struct {
		mechanism string
		want      []string
	}{
		{"laplace", []string{
			"  budget:  each analyst may spend dp epsilon 1 in all (budget.epsilon_cap), 0.1 a query by default: 10 answers, more at a smaller SET epsilon\n",
			"  more:    raise budget.epsilon_cap before the first start; once serve has run, a raise is held at the old cap\n",
			"           countwall budget grant ann --kind dp --epsilon 1 --config t.yaml\n"}},
		{"idp", []string{"may spend idp epsilon 1 in all", ": 10 answers,", "countwall budget grant ann --kind idp --epsilon 1 --config t.yaml\n"}},
		{"gaussian", []string{": at least 10 answers (zCDP composes them for less),"}},
		{"cellkey", []string{"  budget:  cellkey charges none; under laplace, gaussian, idp or bdp each analyst may spend epsilon 1 in all, 0.1 a query by default\n"}},
	}
	for _, tt := range tests {
		var b strings.Builder
		Made{Password: "pw"}.Print(&b, Options{ConfigPath: "t.yaml", Table: dataset.Table{Name: "t"}, Analyst: "ann", Mechanism: tt.mechanism, Listen: "127.0.0.1:5433"})
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: the summary lacks %q:\n%s", tt.mechanism, w, b.String())
			}
		}
		if tt.mechanism == "cellkey" && strings.Contains(b.String(), "budget grant") {
			t.Errorf("cellkey: a grant is offered for a mechanism that charges nothing:\n%s", b.String())
		}
	}
}

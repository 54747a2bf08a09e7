package proxy

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"reflect"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
)

// The grouped stand-in behind the Engine answers exactly as the SQLite
// backend under the additive key model (keys summed from the same secret),
// with the Engine's own parser, SET, SHOW and mechanism: cellkey's sticky
// noise is the same number for every statement of a mixed list, and what
// the stand-in does not model is refused with 0A000.
func TestGroupedStandInAnswersAsSQLite(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 600)
	secret := sha256.Sum256([]byte("grouped stand-in"))
	params := map[string]any{"ptable": "uniform", "D": 3, "suppress_at": 2}
	real, err := Open(ctx, f.config(t, "cellkey", params), Options{Secret: secret[:]})
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	cols, groups, err := GroupsFromSQLite(ctx, f.database, "people", "id", []string{"age", "sex"}, secret[:])
	if err != nil {
		t.Fatal(err)
	}
	cfg := f.config(t, "cellkey", params)
	cfg.State = filepath.Join(f.dir, "grouped-state.db")
	stand, err := Open(ctx, cfg, Options{Secret: secret[:], Grouped: &ir.GroupedTable{Name: "people", Unit: "id", Columns: cols, Groups: groups}})
	if err != nil {
		t.Fatal(err)
	}
	defer stand.Close()
	for _, sql := range []string{
		"SELECT COUNT(*) FROM people WHERE sex = 'F' AND age BETWEEN 20 AND 29",
		"SELECT COUNT(*) FROM people WHERE NOT (age > 30) OR sex <> 'M'",
		"SELECT COUNT(*) > 100 FROM people WHERE age < 40",
		"SELECT COUNT(*) FROM people WHERE age IN (18, 19, 20, 77)",
		// Comparisons no age satisfies, and ones every age does, under NOT.
		"SELECT COUNT(*) FROM people WHERE NOT (age = 30.5)",
		"SELECT COUNT(*) FROM people WHERE NOT (age IN (1e400)) AND sex = 'F'",
		"SELECT COUNT(*) FROM people WHERE NOT (age < 9223372036854775808) OR sex = 'M'",
		"SELECT COUNT(*) FROM people WHERE age BETWEEN 19.5 AND 30.5",
		"SELECT COUNT(*) FROM people",
		"SHOW budget",
		"SHOW mechanism",
	} {
		want, werr := real.Query(ctx, "analyst", sql)
		got, gerr := stand.Query(ctx, "analyst", sql)
		if werr != nil || gerr != nil {
			t.Fatalf("%s: SQLite %v, stand-in %v", sql, werr, gerr)
		}
		if !reflect.DeepEqual(want.Text(), got.Text()) {
			t.Errorf("%s: SQLite %+v, stand-in %+v", sql, want.Text(), got.Text())
		}
	}
	for sql, code := range map[string]pgerror.Code{
		"SELECT sex, COUNT(*) FROM people GROUP BY sex":      pgerror.FeatureNotSupported,
		"SELECT COUNT(DISTINCT id) FROM people":              pgerror.FeatureNotSupported,
		"SELECT COUNT(*) FROM people WHERE suburb = 'North'": pgerror.UndefinedColumn,
		"SELECT COUNT(*) FROM nowhere":                       pgerror.UndefinedTable,
	} {
		if _, err := stand.Query(ctx, "analyst", sql); pgerror.SQLState(err) != code {
			t.Errorf("%s: %v, want %s", sql, err, code)
		}
	}
}

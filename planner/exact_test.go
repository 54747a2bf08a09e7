package planner

import (
	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
	"errors"
	"strings"

	"context"
	"countwall/pgerror"
	"database/sql"
	"math/big"
	"path/filepath"
	"testing"
)

// TestDecimalComparedWithIntegerIsExact compares an integer column with
// decimal constants that float64 would round (as PostgreSQL compares integer
// with numeric: exactly), over the SQLite SQL and the snapshot. The expected
// count is computed with math/big. (A bound parameter compared with an
// integer column is read as bigint, as PostgreSQL types it: see
// TestParameters.)
func TestDecimalComparedWithIntegerIsExact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ages.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE people (id INTEGER, age INTEGER)`); err != nil {
		t.Fatal(err)
	}
	var ages []int64
	for id := int64(1); id <= 130; id++ {
		age := id - 10 // -9 .. 120
		ages = append(ages, age)
		if _, err := db.Exec(`INSERT INTO people VALUES (?, ?)`, id, age); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO people VALUES (999, NULL)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	cat := &ir.Catalog{Tables: map[string]*ir.Table{"people": {Name: "people", PrivacyUnit: "id", Policy: ir.DefaultPolicy(),
		Columns: map[string]*ir.Column{"id": {Name: "id", Type: ir.TypeInt}, "age": {Name: "age", Type: ir.TypeInt}}}}}

	// count is the exact number of ages satisfying `age op v`.
	count := func(op, v string) int64 {
		r, _ := new(big.Rat).SetString(v)
		var n int64
		for _, a := range ages {
			c := new(big.Rat).SetInt64(a).Cmp(r)
			if (op == "=" && c == 0) || (op == "<>" && c != 0) || (op == "<" && c < 0) || (op == "<=" && c <= 0) ||
				(op == ">" && c > 0) || (op == ">=" && c >= 0) {
				n++
			}
		}
		return n
	}
	values := []string{"30.00000000000000000001", "29.99999999999999999999", "1e-400", "-1e-400", "30", "30.0",
		"30.5", "-0.5", "1e30", "-1e30", "9223372036854775807.5", "-9223372036854775808.5", "120.000000000000000001"}
	ops := []string{"=", "<>", "<", "<=", ">", ">="}
	for _, backend := range []plan.StoreOptions{{NoSnapshot: true}, {}} {
		store, err := OpenStore(path, backend)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		for _, v := range values {
			for _, op := range ops {
				want := count(op, v)
				for _, form := range []struct {
					sql  string
					args []*string
				}{
					{"SELECT COUNT(*) FROM people WHERE age " + op + " " + v, nil},
				} {
					stmt, err := Parse(form.sql, form.args, cat)
					if err != nil {
						t.Fatalf("%s: %v", form.sql, err)
					}
					q := stmt.(*ir.Query)
					res, err := store.Run(context.Background(), cat.Tables["people"], q, ir.Needs{}, fixture.Secret)
					if err != nil {
						t.Fatalf("%s: %v", form.sql, err)
					}
					if got := res.Cells[0].Count; got != want {
						t.Errorf("%s (args %v, snapshot %v): %d, want %d", form.sql, form.args != nil, !backend.NoSnapshot, got, want)
					}
				}
			}
		}
		// IN and BETWEEN.
		for _, tc := range []struct {
			where string
			want  int64
		}{
			{"age IN (30.00000000000000000001, 31, 32.5)", 1},
			{"age NOT IN (30.5, 31)", 129},
			{"age IN (30.5)", 0},
			{"age NOT IN (30.5)", 130},
			{"age BETWEEN 29.99999999999999999999 AND 31.00000000000000000001", 2},
			{"age BETWEEN 30.5 AND 30.6", 0},
			{"age NOT BETWEEN 30.5 AND 30.6", 130},
			{"age BETWEEN -1e30 AND 1e30", 130},
			{"age NOT BETWEEN -1e30 AND 1e30", 0},
			{"age BETWEEN -1e30 AND 0.5", 10},
		} {
			stmt, err := Parse("SELECT COUNT(*) FROM people WHERE "+tc.where, nil, cat)
			if err != nil {
				t.Fatalf("%s: %v", tc.where, err)
			}
			res, err := store.Run(context.Background(), cat.Tables["people"], stmt.(*ir.Query), ir.Needs{}, fixture.Secret)
			if err != nil {
				t.Fatalf("%s: %v", tc.where, err)
			}
			if got := res.Cells[0].Count; got != tc.want {
				t.Errorf("%s (snapshot %v): %d, want %d", tc.where, !backend.NoSnapshot, got, tc.want)
			}
		}
	}
}

// TestUnitInWhereSaysHowToAllowIt: the refusal of a condition on the
// privacy unit names the policy key that allows it.
func TestUnitInWhereSaysHowToAllowIt(t *testing.T) {
	cat := &ir.Catalog{Tables: map[string]*ir.Table{"people": {Name: "people", PrivacyUnit: "id", Policy: ir.DefaultPolicy(),
		Columns: map[string]*ir.Column{"id": {Name: "id", Type: ir.TypeInt}}}}}
	_, err := Parse("SELECT COUNT(*) FROM people WHERE id <= 20000", nil, cat)
	var pe *pgerror.Error
	if !errors.As(err, &pe) || pe.Code != pgerror.InsufficientPrivilege || !strings.Contains(pe.Hint, "tables.people.policy.unit_in_where: true") {
		t.Fatalf("error %#v: want 42501 with a hint naming tables.people.policy.unit_in_where", err)
	}
}

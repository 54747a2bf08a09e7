package dataset

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"countwall/pglex"
)

// openReadOnly opens a database file for checking, read-only.
func openReadOnly(t *testing.T, path string) *sql.DB {
	t.Helper()
	dsn, err := sqliteDSN(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// dumpHash is the sha256 of a canonical dump of a table: every row in id
// order, every value tagged with its SQLite storage type.
func dumpHash(t *testing.T, path, table string) (hash string, rows int64) {
	t.Helper()
	db := openReadOnly(t, path)
	res, err := db.Query("SELECT * FROM " + pglex.QuoteIdentAlways(table) + " ORDER BY rowid")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	cols, err := res.Columns()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for res.Next() {
		if err := res.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			fmt.Fprintf(h, "%T:%v|", v, v)
		}
		h.Write([]byte("\n"))
		rows++
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil)), rows
}

// dirEntries lists a directory's file names, sorted.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func genPeople(t *testing.T, rows int64, seed uint64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "people.db")
	if err := GeneratePeople(context.Background(), path, PeopleOptions{Rows: rows, Seed: seed}, WriteOptions{}); err != nil {
		t.Fatalf("GeneratePeople: %v", err)
	}
	return path
}

func fileHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// checkDomains checks that every column of table but the privacy unit
// declares a domain and that every row's value is of the column's type,
// never NULL, and inside that domain.
func checkDomains(t *testing.T, db *sql.DB, table Table, rows int64) {
	t.Helper()
	for _, c := range table.Columns {
		if c.Name == table.PrivacyUnit {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			if !c.HasDomain() {
				t.Fatalf("column %s declares no domain", c.Name)
			}
			q := pglex.QuoteIdentAlways(c.Name)
			var nulls, typed int64
			wantType := map[string]string{TypeInteger: "integer", TypeText: "text"}[c.Type]
			if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FILTER (WHERE %s IS NULL), count(*) FILTER (WHERE typeof(%s) = ?) FROM "+pglex.QuoteIdentAlways(table.Name), q, q), wantType).Scan(&nulls, &typed); err != nil {
				t.Fatal(err)
			}
			if nulls != 0 || typed != rows {
				t.Errorf("%d NULLs and %d values of type %s, want 0 and %d", nulls, typed, wantType, rows)
			}
			if c.HasRange {
				var lo, hi int64
				if err := db.QueryRow(fmt.Sprintf("SELECT min(%s), max(%s) FROM "+pglex.QuoteIdentAlways(table.Name), q, q)).Scan(&lo, &hi); err != nil {
					t.Fatal(err)
				}
				if lo < c.Min || hi > c.Max {
					t.Errorf("values span %d..%d, outside the domain %d..%d", lo, hi, c.Min, c.Max)
				}
				return
			}
			allowed := map[string]bool{}
			for _, cat := range c.Categories {
				allowed[cat] = true
			}
			res, err := db.Query(fmt.Sprintf("SELECT DISTINCT %s FROM "+pglex.QuoteIdentAlways(table.Name), q))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			for res.Next() {
				var v string
				if err := res.Scan(&v); err != nil {
					t.Fatal(err)
				}
				if !allowed[v] {
					t.Errorf("value %q is not in the declared categories", v)
				}
			}
		})
	}
}

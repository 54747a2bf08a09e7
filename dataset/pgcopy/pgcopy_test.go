package pgcopy

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"countwall/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

func TestPgType(t *testing.T) {
	for decl, want := range map[string]string{
		"INTEGER": "bigint", "int": "bigint", "BIGINT": "bigint", "TEXT": "text", "VARCHAR(20)": "text",
		"": "text", "REAL": "double precision", "DOUBLE": "double precision", "NUMERIC": "double precision",
		"BOOLEAN": "bigint", "DATE": "text",
	} {
		if got := pgType(decl); got != want {
			t.Errorf("pgType(%q) = %q, want %q", decl, got, want)
		}
	}
}

// TestPostgresCopyTable copies a table holding NULLs, a quote in a name and
// values stored with another type than declared, and reads it back.
func TestPostgresCopyTable(t *testing.T) {
	url := pgtest.Server(t).NewDatabase(t)
	path := filepath.Join(t.TempDir(), "src.db")
	src, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{
		`CREATE TABLE "the ""t""" (id INTEGER, name TEXT, score REAL)`,
		`INSERT INTO "the ""t""" VALUES (1, 'a', 1.5), (2, NULL, 2), ('3', 7, NULL), (NULL, 'O''Brien', '0.25')`,
	} {
		if _, err := src.Exec(st); err != nil {
			t.Fatal(err)
		}
	}
	src.Close()
	n, err := Table(context.Background(), path, `the "t"`, url)
	if err != nil || n != 4 {
		t.Fatalf("Table = %d, %v; want 4 rows", n, err)
	}
	dst, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	rows, err := dst.Query(`SELECT id, name, score FROM "the ""t""" ORDER BY id NULLS LAST`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type row struct {
		id    sql.NullInt64
		name  sql.NullString
		score sql.NullFloat64
	}
	want := []row{
		{sql.NullInt64{Int64: 1, Valid: true}, sql.NullString{String: "a", Valid: true}, sql.NullFloat64{Float64: 1.5, Valid: true}},
		{sql.NullInt64{Int64: 2, Valid: true}, sql.NullString{}, sql.NullFloat64{Float64: 2, Valid: true}},
		{sql.NullInt64{Int64: 3, Valid: true}, sql.NullString{String: "7", Valid: true}, sql.NullFloat64{}},
		{sql.NullInt64{}, sql.NullString{String: "O'Brien", Valid: true}, sql.NullFloat64{Float64: 0.25, Valid: true}},
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.name, &r.score); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows back, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

package snapshot

import (
	"reflect"
	"testing"
)

// TestDeclaredCollations reads the columns declared with a collating
// sequence other than BINARY from CREATE TABLE texts as SQLite keeps them.
func TestDeclaredCollations(t *testing.T) {
	tests := []struct {
		name, create string
		want         map[string]bool
		wantErr      bool
	}{
		{"none", `CREATE TABLE people (id INTEGER, sex TEXT)`, map[string]bool{}, false},
		{"nocase and rtrim", `CREATE TABLE people (id TEXT COLLATE NOCASE, sex TEXT NOT NULL COLLATE rtrim, age INT)`,
			map[string]bool{"id": true, "sex": true}, false},
		{"binary is the byte order", `CREATE TABLE p (a TEXT COLLATE BINARY, b TEXT collate binary)`, map[string]bool{}, false},
		{"quoted names", `CREATE TABLE "p" ("Odd, name" TEXT COLLATE NOCASE, [b] TEXT, ` + "`c`" + ` TEXT COLLATE "NOCASE")`,
			map[string]bool{"odd, name": true, "c": true}, false},
		{"inside a CHECK or DEFAULT it is no declaration", `CREATE TABLE p (a TEXT CHECK (a COLLATE NOCASE <> 'x'), b TEXT DEFAULT ('COLLATE'))`,
			map[string]bool{}, false},
		{"table constraints", `CREATE TABLE p (a TEXT, b TEXT, PRIMARY KEY (a COLLATE NOCASE), UNIQUE (b), CONSTRAINT c CHECK (a <> ''))`,
			map[string]bool{}, false},
		{"comments and strings", `CREATE TABLE p ( -- COLLATE NOCASE here is a comment
			a TEXT /* COLLATE NOCASE */ DEFAULT 'COLLATE NOCASE', b TEXT COLLATE NOCASE)`, map[string]bool{"b": true}, false},
		{"made from a SELECT", `CREATE TABLE p AS SELECT lower(x) AS a FROM q`, nil, false},
		{"unterminated quote", `CREATE TABLE p ("a TEXT COLLATE NOCASE)`, nil, true},
		{"no end to the columns", `CREATE TABLE p (a TEXT COLLATE NOCASE`, nil, true},
	}
	for _, tt := range tests {
		got, err := declaredCollations(tt.create)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error %v, want an error %v", tt.name, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

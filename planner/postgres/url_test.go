package postgres

import (
	"testing"
)

func TestStoreNameHidesThePassword(t *testing.T) {
	cases := map[string]string{
		"people.db": "people.db",
		"postgres://reader:s3cret@db.example:6432/census?sslmode=require": "postgres://reader@db.example:6432/census",
		"postgresql://owner@db.example/census":                            "postgres://owner@db.example:5432/census",
	}
	for in, want := range cases {
		if got := StoreName(in); got != want {
			t.Errorf("StoreName(%q) = %q, want %q", in, got, want)
		}
	}
}

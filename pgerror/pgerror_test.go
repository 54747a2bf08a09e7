package pgerror

import (
	"errors"
	"fmt"
	"testing"
)

func TestSQLState(t *testing.T) {
	wrapped := fmt.Errorf("planning: %w", Errorf(UndefinedColumn, "column %q does not exist", "agee"))
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"plain error", errors.New("boom"), ""},
		{"direct", Errorf(SyntaxError, "bad"), SyntaxError},
		{"wrapped", wrapped, UndefinedColumn},
		{"joined", errors.Join(errors.New("x"), Errorf(ConfigurationLimitExceeded, "spent")), ConfigurationLimitExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SQLState(tc.err); got != tc.want {
				t.Errorf("SQLState = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestErrorCarriesHint(t *testing.T) {
	err := Errorf(FeatureNotSupported, "GROUP BY %s needs a declared domain", "suburb").WithHint("declare tables.people.domains.suburb")
	if err.Error() != "GROUP BY suburb needs a declared domain" || err.HintText() != "declare tables.people.domains.suburb" || err.SQLState() != FeatureNotSupported {
		t.Fatalf("got %q / %q / %q", err.Error(), err.HintText(), err.SQLState())
	}
}

func TestAsPSQL(t *testing.T) {
	plain := errors.New("disk on fire")
	tests := []struct {
		err  error
		want string
	}{
		{Errorf(FeatureNotSupported, "SELECT * is not supported"), "ERROR 0A000: SELECT * is not supported"},
		{Errorf(UndefinedColumn, "no column %q", "agee").WithHint("did you mean age?"), "ERROR 42703: no column \"agee\"\nHINT: did you mean age?"},
		{plain, "disk on fire"},
	}
	for _, tt := range tests {
		if got := AsPSQL(tt.err).Error(); got != tt.want {
			t.Errorf("AsPSQL(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
	if AsPSQL(plain) != plain {
		t.Error("an error without a SQLSTATE was wrapped")
	}
}

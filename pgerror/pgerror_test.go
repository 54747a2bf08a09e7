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
		want Code
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
	if err.Error() != "GROUP BY suburb needs a declared domain" || err.HintText() != "declare tables.people.domains.suburb" || err.SQLState() != string(FeatureNotSupported) {
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

func TestPublic(t *testing.T) {
	refusal := Errorf(UndefinedTable, "relation %q does not exist", "peple")
	cause := errors.New("disk I/O error reading row 42")
	tests := []struct {
		name         string
		err          error
		wantCode     Code
		wantMessage  string
		wantInternal bool
	}{
		{"a refusal passes", fmt.Errorf("planning: %w", refusal), UndefinedTable, `relation "peple" does not exist`, false},
		{"anything else is hidden", cause, InternalError, InternalMessage, true},
		{"a foreign SQLSTATE is hidden too", sqlStater{"23505"}, InternalError, InternalMessage, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Public(tc.err)
			if got.Code != tc.wantCode || got.Message != tc.wantMessage || got.IsInternal() != tc.wantInternal {
				t.Fatalf("Public = %q %q internal=%v, want %q %q internal=%v", got.Code, got.Message, got.IsInternal(), tc.wantCode, tc.wantMessage, tc.wantInternal)
			}
			if tc.wantInternal && !errors.Is(got, tc.err) {
				t.Error("the internal error does not keep its cause for the log")
			}
		})
	}
	if Public(nil) != nil {
		t.Error("Public(nil) is not nil")
	}
}

type sqlStater struct{ code string }

func (e sqlStater) Error() string    { return "duplicate key value violates unique constraint" }
func (e sqlStater) SQLState() string { return e.code }

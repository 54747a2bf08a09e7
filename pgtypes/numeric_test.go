package pgtypes

import (
	"math"
	"math/big"
	"testing"
)

// The expected texts are PostgreSQL 15's (avg over bigint, float8out).
func TestFormatNumericAvg(t *testing.T) {
	huge, _ := new(big.Int).SetString("18446744073709551614", 10)
	tests := []struct {
		sum  *big.Int
		n    int64
		want string
	}{
		{big.NewInt(0), 2, "0.00000000000000000000"},
		{big.NewInt(3), 2, "1.5000000000000000"},
		{big.NewInt(-3), 2, "-1.5000000000000000"},
		{big.NewInt(100002), 2, "50001.000000000000"},
		{big.NewInt(7), 3, "2.3333333333333333"},
		{big.NewInt(-5), 4, "-1.2500000000000000"},
		{big.NewInt(12345678), 3, "4115226.000000000000"},
		{huge, 2, "9223372036854775807"},
	}
	for _, tc := range tests {
		if got := FormatNumericAvg(tc.sum, tc.n); got != tc.want {
			t.Errorf("avg %s/%d = %s, want %s", tc.sum, tc.n, got, tc.want)
		}
	}
}

func TestFormatFloat8(t *testing.T) {
	tests := map[float64]string{1000000: "1000000", 1234567890.5: "1234567890.5", 1e15: "1e+15", 1e14: "100000000000000",
		0.0001: "0.0001", 0.00001: "1e-05", math.Inf(-1): "-Infinity", 0: "0", -2.5: "-2.5"}
	for f, want := range tests {
		if got := FormatFloat8(f); got != want {
			t.Errorf("FormatFloat8(%g) = %s, want %s", f, got, want)
		}
	}
}

package pgwire

import (
	"math/big"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// Each numeric's binary form reads back, through pgx's decoder, as the
// value and the scale its text says.
func TestNumericBinaryReadsBack(t *testing.T) {
	m := pgtype.NewMap()
	for _, text := range []string{"0", "0.00000000000000000000", "1.5000000000000000", "-1.2500000000000000", "18446744073709551614",
		"-9223372036854775808000", "50001.000000000000", "10000", "0.0001"} {
		var n pgtype.Numeric
		if err := m.Scan(oidNumeric, pgtype.BinaryFormatCode, appendNumericBinary(nil, text), &n); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		var back pgtype.Numeric
		if err := back.Scan(text); err != nil {
			t.Fatal(err)
		}
		if ratOf(n).Cmp(ratOf(back)) != 0 {
			t.Errorf("%s reads back as %v, want %v", text, ratOf(n), ratOf(back))
		}
	}
}

// ratOf is a numeric's exact value (pgx reads a zero without its scale).
func ratOf(n pgtype.Numeric) *big.Rat {
	r := new(big.Rat).SetInt(n.Int)
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(n.Exp, -n.Exp))), nil))
	if n.Exp >= 0 {
		return r.Mul(r, p)
	}
	return r.Quo(r, p)
}

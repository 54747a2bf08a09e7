package state

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"countwall/ir"
)

func TestWriteTable(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name     string
		balances []Balance
		want     []string // lines, with runs of spaces collapsed to one
	}{
		{"nothing yet", nil, []string{"no budget spent or granted yet"}},
		{"caps known and unknown", []Balance{
			{Analyst: "alice", Kind: ir.AccountingDP, EpsilonSpent: 0.1, EpsilonCap: 2.5, EpsilonGranted: 0.5, DeltaCap: math.Inf(1)},
			{Analyst: "bob", Kind: ir.AccountingIDP, EpsilonSpent: 2e-10, EpsilonCap: nan, DeltaCap: nan},
		}, []string{
			"ANALYST KIND EPSILON SPENT EPSILON CAP EPSILON REMAINING EPSILON GRANTED DELTA SPENT DELTA CAP DELTA REMAINING DELTA GRANTED RHO SPENT",
			"alice dp 0.1 2.5 2.4 0.5 0 +Inf +Inf 0 0",
			"bob idp 2e-10 - - 0 0 - - 0 0",
		}},
		{"zCDP spending explained", []Balance{{Analyst: "carol", Kind: ir.AccountingDP, RhoSpent: 0.02, EpsilonCap: 1, DeltaCap: 1e-5}}, []string{
			"ANALYST KIND EPSILON SPENT EPSILON CAP EPSILON REMAINING EPSILON GRANTED DELTA SPENT DELTA CAP DELTA REMAINING DELTA GRANTED RHO SPENT",
			"carol dp 0 1 1 0 0 1e-05 1e-05 0 0.02",
			"RHO SPENT is zCDP spending (gaussian), not included in EPSILON SPENT: at the analyst's delta cap d it costs epsilon rho + 2*sqrt(rho*ln(1/d)) (SHOW budget shows it converted)",
		}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		WriteTable(&b, tt.balances)
		got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		for i := range got {
			got[i] = strings.Join(strings.Fields(got[i]), " ")
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}

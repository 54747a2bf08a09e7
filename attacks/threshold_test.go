package attacks_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"countwall/attacks"
	"countwall/ir"
)

// valueFirewall is the grouped stand-in behind an Engine over one integer
// column "v" whose value x is held by counts[x] rows, answering through the
// named mechanism (seeded).
func valueFirewall(t *testing.T, counts []int64, mechanism string, params map[string]any) *standIn {
	t.Helper()
	groups := make([]ir.Group, len(counts))
	for x, c := range counts {
		groups[x] = ir.Group{Values: []any{int64(x)}, Count: c}
	}
	return openStandIn(t, ir.GroupedTable{Name: "t", Columns: []ir.GroupedColumn{{Name: "v", Type: ir.TypeInt}}, Groups: groups}, mechanism, params, 7)
}

// The oracle finds the table size and every range count exactly, under idp
// at k = 1, 2 and 3 (ternary search on the sensitivity's edges) and under
// exact (k = 0, a plain binary search), including the window near n where
// b+k passes the table size.
func TestThresholdOracleCountsExactly(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	counts := make([]int64, 12)
	for i := range counts {
		counts[i] = int64(rng.IntN(6))
	}
	counts[5] = 40 // one heavy value: ranges near n
	var n int64
	for _, c := range counts {
		n += c
	}
	for _, tc := range []struct {
		mechanism string
		params    map[string]any
		k         int64
	}{
		{"exact", nil, 0},
		{"idp", map[string]any{"k": 1}, 1},
		{"idp", map[string]any{"k": 2}, 2},
		{"idp", map[string]any{"k": 3}, 3},
	} {
		t.Run(fmt.Sprintf("%s k=%d", tc.mechanism, tc.k), func(t *testing.T) {
			f := valueFirewall(t, counts, tc.mechanism, tc.params)
			o, err := attacks.NewThresholdOracle(ctx, f, "t", attacks.ThresholdSetup{GroupK: tc.k})
			if err != nil {
				t.Fatal(err)
			}
			if o.N != n {
				t.Fatalf("table size %d, want %d", o.N, n)
			}
			for lo := 0; lo < len(counts); lo++ {
				for hi := lo + 1; hi <= len(counts); hi++ {
					var want int64
					for _, c := range counts[lo:hi] {
						want += c
					}
					where := fmt.Sprintf("v >= %d AND v < %d", lo, hi)
					got, err := o.Count(ctx, where, 0, n)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Errorf("count of %s = %d, want %d", where, got, want)
					}
				}
			}
			if o.Inconsistent != 0 {
				t.Errorf("%d searches contradicted the model", o.Inconsistent)
			}
		})
	}
}

// Asking idp with the default setup reads k = 1 from SHOW mechanism and
// sets the paper's epsilon share of 1e-10 per query, which SHOW budget sums.
func TestThresholdOracleSetup(t *testing.T) {
	ctx := context.Background()
	f := valueFirewall(t, []int64{3, 0, 4}, "idp", nil)
	o, err := attacks.NewThresholdOracle(ctx, f, "t", attacks.ThresholdSetup{GroupK: -1})
	if err != nil {
		t.Fatal(err)
	}
	if o.K != 1 || o.N != 7 {
		t.Fatalf("k = %d, n = %d; want 1 and 7", o.K, o.N)
	}
	spent, err := attacks.Spent(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	probes := f.Queries() - 3 // SET epsilon, SHOW mechanism, SHOW budget
	if want := float64(probes) * attacks.DefaultThresholdEpsilon; spent["idp"] < want*0.999 || spent["idp"] > want*1.001 {
		t.Errorf("idp spent %g after %d probes, want %g", spent["idp"], probes, want)
	}
	e := valueFirewall(t, []int64{3, 0, 4}, "exact", nil)
	o, err = attacks.NewThresholdOracle(ctx, e, "t", attacks.ThresholdSetup{GroupK: -1, Rows: 7})
	if err != nil {
		t.Fatal(err)
	}
	if o.K != 0 || o.N != 7 {
		t.Fatalf("exact: k = %d, n = %d; want 0 and 7", o.K, o.N)
	}
}

func TestParseDomain(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		size     int64
	}{
		{"age=0..100", "age >= 3 AND age < 7", 101},
		{"sex = M, F", "sex >= 'M'", 2},
	} {
		d, err := attacks.ParseDomain(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		i, j := int64(3), int64(7)
		if d.Categories != nil {
			i, j = 1, 2
		}
		if got := d.Range(i, j); got != tc.want || d.Size() != tc.size {
			t.Errorf("%s: range %q size %d, want %q and %d", tc.in, got, d.Size(), tc.want, tc.size)
		}
	}
	for _, bad := range []string{"age", "age=5..1", "1x=0..3", "age=a..b"} {
		if _, err := attacks.ParseDomain(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

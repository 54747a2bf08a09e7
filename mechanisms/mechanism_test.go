package mechanisms

import "testing"

func TestDropsLowCounts(t *testing.T) {
	tests := []struct {
		name   string
		params Params
		want   bool
	}{
		{"exact", nil, false},
		{"suppress", Params{"mode": "zero"}, false},
		{"suppress", Params{"mode": "drop"}, true},
		{"bounded", nil, false},
		{"cellkey", nil, false},
		{"layered", nil, true},
		{"laplace", nil, true}, // partition selection
		{"gaussian", nil, true},
		{"laplace", Params{"partition_selection": map[string]any{"enabled": false}}, false},
		{"gaussian", Params{"partition_selection": map[string]any{"enabled": false}}, false},
		{"idp", nil, false},
		{"bdp", nil, false},
	}
	for _, tc := range tests {
		m, err := New(tc.name, tc.params, Env{Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := DropsLowCounts(m); got != tc.want {
			t.Errorf("%s %v: DropsLowCounts = %v, want %v", tc.name, tc.params, got, tc.want)
		}
	}
}

package mechanisms

import (
	"testing"

	"countwall/ir"
)

// A mechanism that withholds small counts marks every 0 it publishes, a
// noisy count taken to 0 as well as a withheld one, so that the mark (NULL
// on the wire) says no more than the 0; one that withholds nothing marks
// nothing. Counts 0..12 with many keys and draws reach both kinds of 0.
func TestEveryPublishedZeroOfAWithholderIsMarked(t *testing.T) {
	tests := []struct {
		name      string
		params    Params
		withholds bool
	}{
		{"suppress", Params{"threshold": 3}, true},
		{"bounded", Params{"range": 4, "suppress_at": 1}, true},
		{"bounded", Params{"range": 4, "suppress_at": -1}, false},
		{"cellkey", Params{"D": 3, "suppress_at": 0}, true},
		{"cellkey", Params{"D": 3, "suppress_at": -1}, false},
		{"layered", nil, true},
		{"layered", Params{"low_count_min_threshold": 0, "low_count_mean_gap": 0, "low_count_layer_sd": 0, "noise_layer_sd": 3}, false},
	}
	for _, tt := range tests {
		m, err := New(tt.name, tt.params, Env{Seed: 3, Secret: []byte("s")})
		if err != nil {
			t.Fatal(err)
		}
		zeroAnswers, marked := 0, 0
		for count := int64(0); count <= 12; count++ {
			for key := uint32(0); key < 300; key++ {
				req := layeredRequest(&ir.Query{Table: "people"}, []string{"age = 30"}, false,
					ir.Cell{Count: count, Units: count, Key: key * 2654435761, InDomain: true})
				req.Result.Bounds = ir.DefaultBounds()
				a := answerWithoutCharge(t, m, req)[0]
				switch {
				case a.Suppressed && a.Int != 0:
					t.Fatalf("%s %v: count %d published %d marked withheld", tt.name, tt.params, count, a.Int)
				case !a.Suppressed && !a.Dropped && a.Int == 0 && tt.withholds:
					t.Fatalf("%s %v: count %d published an unmarked 0", tt.name, tt.params, count)
				case a.Suppressed && !tt.withholds:
					t.Fatalf("%s %v: count %d marked withheld by a mechanism that withholds nothing", tt.name, tt.params, count)
				case a.Int == 0 && count > 0:
					zeroAnswers++
				}
				if a.Suppressed {
					marked++
				}
			}
		}
		if tt.withholds && marked == 0 {
			t.Errorf("%s %v: nothing withheld", tt.name, tt.params)
		}
		t.Logf("%s %v: %d zeros published for positive counts, %d marked", tt.name, tt.params, zeroAnswers, marked)
	}
}

package mechanisms

import (
	"math"
	"strings"
	"testing"
)

// testParams is a parameter struct as a mechanism declares one, defaults
// set before decoding.
type testParams struct {
	D       int64   `mapstructure:"D"`
	Epsilon float64 `mapstructure:"epsilon"`
	Publish bool    `mapstructure:"publish_parameters"`
	Ptable  string  `mapstructure:"ptable"`
}

func defaultTestParams() testParams {
	return testParams{D: 7, Epsilon: 0.5, Publish: true, Ptable: "uniform"}
}

// TestDecodeParams: every spelling a config decoder produces reaches the
// typed field, and a value of the wrong type is refused naming the key.
func TestDecodeParams(t *testing.T) {
	tests := []struct {
		name    string
		p       Params
		want    func(*testParams)
		wantErr string // exact error text; empty for success
	}{
		{"absent keeps the defaults", Params{}, func(*testParams) {}, ""},
		{"int", Params{"D": 3}, func(w *testParams) { w.D = 3 }, ""},
		{"int64", Params{"D": int64(4)}, func(w *testParams) { w.D = 4 }, ""},
		{"uint32", Params{"D": uint32(5)}, func(w *testParams) { w.D = 5 }, ""},
		{"whole float64 from YAML", Params{"D": 6.0}, func(w *testParams) { w.D = 6 }, ""},
		{"string from the environment", Params{"D": " 8 "}, func(w *testParams) { w.D = 8 }, ""},
		{"whole float string", Params{"D": "9.0"}, func(w *testParams) { w.D = 9 }, ""},
		{"key matched without case (viper lower-cases)", Params{"d": 2}, func(w *testParams) { w.D = 2 }, ""},
		{"fraction", Params{"D": 2.5}, nil, `mechanism parameter "D": must be an integer, got 2.5`},
		{"word", Params{"D": "two"}, nil, `mechanism parameter "D": must be an integer, got "two"`},
		{"boolean", Params{"D": true}, nil, `mechanism parameter "D": must be an integer, got true (a boolean)`},
		{"list", Params{"D": []any{1}}, nil, `mechanism parameter "D": must be an integer, got a list`},
		{"uint64 overflow", Params{"D": uint64(math.MaxUint64)}, nil, `mechanism parameter "D": must be an integer, got 18446744073709551615`},
		{"huge float", Params{"D": 1e300}, nil, `mechanism parameter "D": must be an integer, got 1e+300`},
		{"float", Params{"epsilon": 0.25}, func(w *testParams) { w.Epsilon = 0.25 }, ""},
		{"float from an int", Params{"epsilon": 1}, func(w *testParams) { w.Epsilon = 1 }, ""},
		{"float string", Params{"epsilon": "1e-1"}, func(w *testParams) { w.Epsilon = 0.1 }, ""},
		{"NaN", Params{"epsilon": math.NaN()}, nil, `mechanism parameter "epsilon": must be a finite number, got NaN`},
		{"infinite string", Params{"epsilon": "inf"}, nil, `mechanism parameter "epsilon": must be a finite number, got "inf"`},
		{"float word", Params{"epsilon": "small"}, nil, `mechanism parameter "epsilon": must be a finite number, got "small"`},
		{"bool", Params{"publish_parameters": false}, func(w *testParams) { w.Publish = false }, ""},
		{"env string yes", Params{"publish_parameters": "YES"}, func(w *testParams) { w.Publish = true }, ""},
		{"env string 0", Params{"publish_parameters": "0"}, func(w *testParams) { w.Publish = false }, ""},
		{"number for a bool", Params{"publish_parameters": 1}, nil, `mechanism parameter "publish_parameters": must be true or false, got 1`},
		{"word for a bool", Params{"publish_parameters": "maybe"}, nil, `mechanism parameter "publish_parameters": must be true or false, got "maybe"`},
		{"string", Params{"ptable": "x.csv"}, func(w *testParams) { w.Ptable = "x.csv" }, ""},
		{"list for a string", Params{"ptable": []any{"x"}}, nil, `mechanism parameter "ptable": must be a string, got a list`},
		{"typo gets a suggestion", Params{"ptabel": "x"}, nil,
			`mechanism parameter "ptabel": unknown parameter; did you mean "ptable"? (known: D, epsilon, ptable, publish_parameters)`},
		{"unrelated key lists the known ones", Params{"colour": "red"}, nil,
			`mechanism parameter "colour": unknown parameter (known: D, epsilon, ptable, publish_parameters)`},
		{"same key twice in different case", Params{"D": 1, "d": 2}, nil,
			`mechanism parameter "d": given twice (as "D" and "d")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := defaultTestParams()
			err := decodeParams(tt.p, &got)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error:\n got %v\nwant %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			want := defaultTestParams()
			tt.want(&want)
			if got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
	if err := decodeParams(Params{"x": 1}, &struct{}{}); err == nil ||
		err.Error() != `mechanism parameter "x": unknown parameter: this mechanism takes no parameters` {
		t.Errorf("mechanism without parameters: got %v", err)
	}
}

// TestParamChecks: the range and choice checks a mechanism applies after
// decoding, worded as before.
func TestParamChecks(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // "" for no error
	}{
		{"int in range", intParamIn("D", 10, 1, 10), ""},
		{"int below", intParamIn("D", -2, 1, 10), `mechanism parameter "D": must be an integer between 1 and 10, got -2`},
		{"int above", intParamIn("D", 11, 1, 10), `mechanism parameter "D": must be an integer between 1 and 10, got 11`},
		{"int open above", intParamIn("k", -2, 1, math.MaxInt64), `mechanism parameter "k": must be an integer >= 1, got -2`},
		{"int open below", intParamIn("k", -2, math.MinInt64, -5), `mechanism parameter "k": must be an integer <= -5, got -2`},
		{"float out of range", floatParamIn("epsilon", 3, 0, 2), `mechanism parameter "epsilon": must be a number between 0 and 2, got 3`},
		{"float in range", floatParamIn("epsilon", 2, 0, 2), ""},
	}
	for _, tt := range tests {
		got := ""
		if tt.err != nil {
			got = tt.err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: error %q, want %q", tt.name, got, tt.want)
		}
	}
	if got, err := choiceParam("mode", "DROP", "zero", "drop"); err != nil || got != "drop" {
		t.Errorf("choice case-folded: got %q, %v", got, err)
	}
	if _, err := choiceParam("mode", "delete", "zero", "drop"); err == nil ||
		err.Error() != `mechanism parameter "mode": must be one of "zero", "drop", got "delete"` {
		t.Errorf("bad choice: got %v", err)
	}
	if got, err := nonEmptyParam("ptable", " x.csv "); err != nil || got != "x.csv" {
		t.Errorf("non-empty trimmed: got %q, %v", got, err)
	}
	if _, err := nonEmptyParam("ptable", "  "); err == nil ||
		err.Error() != `mechanism parameter "ptable": must be a non-empty string, got "  "` {
		t.Errorf("blank string: got %v", err)
	}
}

// Every factory of this file's mechanisms refuses unknown and bad
// parameters with an error naming the key.
func TestFactoriesNameTheBadKey(t *testing.T) {
	tests := []struct {
		mech string
		p    Params
		key  string
	}{
		{"exact", Params{"threshold": 3}, "threshold"},
		{"suppress", Params{"thresold": 3}, "thresold"},
		{"suppress", Params{"threshold": -1}, "threshold"},
		{"suppress", Params{"mode": "hide"}, "mode"},
		{"bounded", Params{"range": "wide"}, "range"},
		{"bounded", Params{"suppress_at": -2}, "suppress_at"},
		{"bounded", Params{"rnage": 2}, "rnage"},
		{"cellkey", Params{"D": 0}, "D"},
		{"cellkey", Params{"ptable": "abs_example", "D": 3}, "D"},
		{"cellkey", Params{"ptable": "testdata/does_not_exist.csv"}, "ptable"},
		{"cellkey", Params{"publish_parameters": "sometimes"}, "publish_parameters"},
		{"cellkey", Params{"suppress_at": 1.5}, "suppress_at"},
	}
	for _, tt := range tests {
		_, err := New(tt.mech, tt.p, Env{Seed: 1})
		if err == nil {
			t.Errorf("%s %v: no error", tt.mech, tt.p)
			continue
		}
		if want := `mechanism parameter "` + tt.key + `"`; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s %v: error %q does not start with %s", tt.mech, tt.p, err, want)
		}
	}
}

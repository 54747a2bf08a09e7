package mechanisms

import (
	"math"
	"strings"
	"testing"
)

func TestParamInt(t *testing.T) {
	tests := []struct {
		name    string
		p       Params
		want    int64
		wantErr string // exact error text; empty for success
	}{
		{"absent uses default", Params{}, 7, ""},
		{"int", Params{"D": 3}, 3, ""},
		{"int64", Params{"D": int64(4)}, 4, ""},
		{"uint32", Params{"D": uint32(5)}, 5, ""},
		{"whole float64 from YAML", Params{"D": 6.0}, 6, ""},
		{"string from the environment", Params{"D": " 8 "}, 8, ""},
		{"whole float string", Params{"D": "9.0"}, 9, ""},
		{"key matched without case (viper lower-cases)", Params{"d": 2}, 2, ""},
		{"at max", Params{"D": 10}, 10, ""},
		{"below min", Params{"D": -2}, 0, `mechanism parameter "D": must be an integer between 1 and 10, got -2`},
		{"above max", Params{"D": int64(11)}, 0, `mechanism parameter "D": must be an integer between 1 and 10, got 11`},
		{"fraction", Params{"D": 2.5}, 0, `mechanism parameter "D": must be an integer between 1 and 10, got 2.5`},
		{"word", Params{"D": "two"}, 0, `mechanism parameter "D": must be an integer between 1 and 10, got "two"`},
		{"boolean", Params{"D": true}, 0, `mechanism parameter "D": must be an integer between 1 and 10, got true (a boolean)`},
		{"empty YAML value", Params{"D": nil}, 0, `mechanism parameter "D": must be an integer between 1 and 10, got nothing`},
		{"list", Params{"D": []any{1}}, 0, `mechanism parameter "D": must be an integer between 1 and 10, got a list`},
		{"uint64 overflow", Params{"D": uint64(math.MaxUint64)}, 0, `mechanism parameter "D": must be an integer between 1 and 10, got 18446744073709551615`},
		{"huge float", Params{"D": 1e300}, 0, `mechanism parameter "D": must be an integer between 1 and 10, got 1e+300`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := paramInt(tt.p, "D", 7, 1, 10)
			checkParamResult(t, got, tt.want, err, tt.wantErr)
		})
	}
}

func TestParamIntRangeWording(t *testing.T) {
	tests := []struct {
		min, max int64
		want     string
	}{
		{1, math.MaxInt64, `mechanism parameter "k": must be an integer >= 1, got -2`},
		{math.MinInt64, -5, `mechanism parameter "k": must be an integer <= -5, got -2`},
	}
	for _, tt := range tests {
		_, err := paramInt(Params{"k": -2}, "k", 0, tt.min, tt.max)
		if err == nil || err.Error() != tt.want {
			t.Errorf("range [%d, %d]: got error %v, want %q", tt.min, tt.max, err, tt.want)
		}
	}
	if _, err := paramInt(Params{"k": "x"}, "k", 0, math.MinInt64, math.MaxInt64); err == nil ||
		err.Error() != `mechanism parameter "k": must be an integer, got "x"` {
		t.Errorf("unbounded range: got error %v", err)
	}
}

func TestParamFloat(t *testing.T) {
	tests := []struct {
		name    string
		p       Params
		want    float64
		wantErr string
	}{
		{"absent", Params{}, 0.5, ""},
		{"float64", Params{"epsilon": 0.25}, 0.25, ""},
		{"int", Params{"epsilon": 1}, 1, ""},
		{"string", Params{"epsilon": "1e-1"}, 0.1, ""},
		{"out of range", Params{"epsilon": 3.0}, 0, `mechanism parameter "epsilon": must be a number between 0 and 2, got 3`},
		{"NaN", Params{"epsilon": math.NaN()}, 0, `mechanism parameter "epsilon": must be a number between 0 and 2, got NaN`},
		{"infinite string", Params{"epsilon": "inf"}, 0, `mechanism parameter "epsilon": must be a number between 0 and 2, got "inf"`},
		{"word", Params{"epsilon": "small"}, 0, `mechanism parameter "epsilon": must be a number between 0 and 2, got "small"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := paramFloat(tt.p, "epsilon", 0.5, 0, 2)
			checkParamResult(t, got, tt.want, err, tt.wantErr)
		})
	}
}

func TestParamBool(t *testing.T) {
	tests := []struct {
		name    string
		p       Params
		want    bool
		wantErr string
	}{
		{"absent", Params{}, true, ""},
		{"bool", Params{"publish_parameters": false}, false, ""},
		{"env string yes", Params{"publish_parameters": "YES"}, true, ""},
		{"env string 0", Params{"publish_parameters": "0"}, false, ""},
		{"number", Params{"publish_parameters": 1}, false, `mechanism parameter "publish_parameters": must be true or false, got 1`},
		{"word", Params{"publish_parameters": "maybe"}, false, `mechanism parameter "publish_parameters": must be true or false, got "maybe"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := paramBool(tt.p, "publish_parameters", true)
			checkParamResult(t, got, tt.want, err, tt.wantErr)
		})
	}
}

func TestParamStringAndChoice(t *testing.T) {
	if got, err := paramString(Params{"ptable": " x.csv "}, "ptable", "uniform"); err != nil || got != "x.csv" {
		t.Errorf("paramString trimmed: got %q, %v", got, err)
	}
	if got, err := paramString(Params{}, "ptable", "uniform"); err != nil || got != "uniform" {
		t.Errorf("paramString default: got %q, %v", got, err)
	}
	if _, err := paramString(Params{"ptable": 3}, "ptable", ""); err == nil ||
		err.Error() != `mechanism parameter "ptable": must be a non-empty string, got 3` {
		t.Errorf("paramString wrong type: got %v", err)
	}
	if _, err := paramString(Params{"ptable": "  "}, "ptable", ""); err == nil ||
		err.Error() != `mechanism parameter "ptable": must be a non-empty string, got "  "` {
		t.Errorf("paramString blank: got %v", err)
	}
	if got, err := paramChoice(Params{"mode": "DROP"}, "mode", "zero", "zero", "drop"); err != nil || got != "drop" {
		t.Errorf("paramChoice case-folded: got %q, %v", got, err)
	}
	if _, err := paramChoice(Params{"mode": "delete"}, "mode", "zero", "zero", "drop"); err == nil ||
		err.Error() != `mechanism parameter "mode": must be one of "zero", "drop", got "delete"` {
		t.Errorf("paramChoice bad: got %v", err)
	}
}

func TestCheckKnownParams(t *testing.T) {
	tests := []struct {
		name    string
		p       Params
		known   []string
		wantErr string
	}{
		{"all known", Params{"threshold": 3, "mode": "drop"}, []string{"threshold", "mode"}, ""},
		{"known in other case", Params{"d": 3}, []string{"D"}, ""},
		{"none given", Params{}, []string{"D"}, ""},
		{"typo gets a suggestion", Params{"thresold": 3}, []string{"threshold", "mode"},
			`mechanism parameter "thresold": unknown parameter; did you mean "threshold"? (known: threshold, mode)`},
		{"unrelated key lists the known ones", Params{"colour": "red"}, []string{"threshold", "mode"},
			`mechanism parameter "colour": unknown parameter (known: threshold, mode)`},
		{"mechanism without parameters", Params{"x": 1}, nil,
			`mechanism parameter "x": unknown parameter: this mechanism takes no parameters`},
		{"same key twice in different case", Params{"D": 1, "d": 2}, []string{"D"},
			`mechanism parameter "d": given twice (as "D" and "d")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkKnownParams(tt.p, tt.known...)
			checkParamResult(t, 0, 0, err, tt.wantErr)
		})
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

func checkParamResult[T comparable](t *testing.T, got, want T, err error, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil {
			t.Fatalf("got %v, want error %q", got, wantErr)
		}
		if err.Error() != wantErr {
			t.Fatalf("error:\n got %q\nwant %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}

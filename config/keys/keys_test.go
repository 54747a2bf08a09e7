package keys

import (
	"strings"
	"testing"
	"time"
)

type inner struct {
	Limit int           `mapstructure:"limit"`
	Wait  time.Duration `mapstructure:"wait"`
	On    bool          `mapstructure:"on"`
}

type outer struct {
	Name    string           `mapstructure:"name"`
	Rate    float64          `mapstructure:"rate"`
	Inner   inner            `mapstructure:"inner"`
	Items   map[string]inner `mapstructure:"items"`
	Tags    []string         `mapstructure:"tags"`
	Hidden  any              `mapstructure:"hidden" keys:"hidden"`
	Default int              `mapstructure:"default"`
}

// TestDecode: values in the spellings YAML and the environment give reach
// their fields; every bad key is named by its dotted path, one error each.
func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		raw     map[string]any
		check   func(o outer) bool
		wantErr []string // the joined error's lines, in order
	}{
		{"YAML types", map[string]any{"name": "a", "rate": 1, "inner": map[string]any{"limit": 3, "wait": "2s", "on": true}},
			func(o outer) bool {
				return o.Name == "a" && o.Rate == 1 && o.Inner == (inner{Limit: 3, Wait: 2 * time.Second, On: true}) && o.Default == 9
			}, nil},
		{"environment strings", map[string]any{"rate": "0.5", "inner": map[string]any{"limit": "4", "on": "yes"}},
			func(o outer) bool { return o.Rate == 0.5 && o.Inner.Limit == 4 && o.Inner.On }, nil},
		{"whole float into an int", map[string]any{"default": 2.0}, func(o outer) bool { return o.Default == 2 }, nil},
		{"numbers in a string list", map[string]any{"tags": []any{"F", 2000}},
			func(o outer) bool { return strings.Join(o.Tags, ",") == "F,2000" }, nil},
		{"map of sections", map[string]any{"items": map[string]any{"x": map[string]any{"limit": 1}}},
			func(o outer) bool { return o.Items["x"].Limit == 1 }, nil},
		{"hidden key is read", map[string]any{"hidden": 1}, func(o outer) bool { return o.Hidden == 1 }, nil},
		{"bad values and unknown keys", map[string]any{
			"rate":  "fast",
			"inner": map[string]any{"limit": 1.5, "wiat": "1s"},
			"items": map[string]any{"x": map[string]any{"on": 2}},
			"nmae":  "a",
		}, nil, []string{
			`inner.limit: must be an integer, got 1.5`,
			`inner.wiat: unknown key (known: limit, on, wait)`,
			`items.x.on: must be true or false, got 2`,
			`nmae: unknown key (known: default, inner, items, name, rate, tags)`,
			`rate: must be a finite number, got "fast"`,
		}},
		{"a scalar where a section goes", map[string]any{"inner": 3}, nil, []string{`inner: must be a map of keys, got 3`}},
		{"bad duration", map[string]any{"inner": map[string]any{"wait": "soon"}}, nil, []string{`inner.wait: must be a duration such as 10s, got "soon"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := outer{Default: 9}
			err := Decode(tt.raw, &o, Options{})
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, want %q", tt.wantErr)
				}
				if got := strings.Split(err.Error(), "\n"); strings.Join(got, "|") != strings.Join(tt.wantErr, "|") {
					t.Fatalf("errors:\n got %q\nwant %q", got, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(o) {
				t.Errorf("decoded %+v", o)
			}
		})
	}
}

// TestDecodeOptions: Name and Unknown word the errors.
func TestDecodeOptions(t *testing.T) {
	opts := Options{
		Name:    func(path string) string { return "section." + path },
		Unknown: func(key string, known []string) string { return "no " + key + " here; try " + strings.Join(known, "/") },
	}
	err := Decode(map[string]any{"limit": "x", "lmit": 1}, &inner{}, opts)
	want := `section.limit: must be an integer, got "x"` + "\n" + `section.lmit: no lmit here; try limit/on/wait`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

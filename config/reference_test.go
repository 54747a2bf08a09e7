package config

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"

	"countwall/ir"
)

// referencePage is the page whose config reference this test holds to the
// structs: the operator's guide, its "Config reference" section.
const referencePage = "../docs/operator.md"

// rawSections are the sections the file struct keeps raw, decoded later on
// top of defaults from elsewhere: each names the struct that decodes it, or
// nil where the section's keys are the owner's own names (a leaf).
var rawSections = map[string]reflect.Type{
	"analysts":            reflect.TypeOf(Analyst{}),
	"policy":              reflect.TypeOf(policyKeys{}),
	"tables.NAME.policy":  nil, // the same keys, written tables.NAME.policy.*
	"tables.NAME.domains": nil, // a column's name
	"tables.NAME.bounds":  nil, // a column's name
	"mechanisms":          nil, // a mechanism's name; its parameters are docs/mechanisms.md's
	"mechanism.params":    nil,
}

// leafNames are how the reference writes the keys below a leaf section.
var leafNames = map[string]string{
	"tables.NAME.policy":  "tables.NAME.policy.*",
	"tables.NAME.domains": "tables.NAME.domains.COL",
	"tables.NAME.bounds":  "tables.NAME.bounds.COL",
	"mechanisms":          "mechanisms.NAME",
	"mechanism.params":    "mechanism.params",
}

// configKeys lists every key a config file may hold, as the reference
// writes them, walking the structs the file is decoded into.
func configKeys(t *testing.T) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	var walk func(typ reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name, ok := f.Tag.Lookup("mapstructure")
			if !ok || f.Tag.Get("keys") == "hidden" {
				continue
			}
			key := prefix + name
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Struct && ft != reflect.TypeOf(time.Duration(0)):
				walk(ft, key+".")
			case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), key+".NAME.")
			case ft.Kind() == reflect.Map:
				sub, known := rawSections[key]
				switch {
				case !known:
					t.Fatalf("%s is a section this test does not know: name the struct that decodes it in rawSections", key)
				case sub == nil:
					keys[leafNames[key]] = true
				case key == "analysts": // one section per analyst
					walk(sub, key+".NAME.")
				default:
					walk(sub, key+".")
				}
			default:
				keys[key] = true
			}
		}
	}
	walk(reflect.TypeOf(file{}), "")
	return keys
}

// referenceRow is one row of the reference: its key and its default cell.
type referenceRow struct {
	key, dflt string
	line      int
}

var firstCodeSpan = regexp.MustCompile("`([^`]*)`")

// readReference reads the rows of the config reference table.
func readReference(t *testing.T) []referenceRow {
	t.Helper()
	raw, err := os.ReadFile(referencePage)
	if err != nil {
		t.Fatal(err)
	}
	var rows []referenceRow
	in := false
	for i, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Config reference"
		case in && strings.HasPrefix(line, "| `"):
			cells := strings.Split(strings.ReplaceAll(line, `\|`, "/"), "|")[1:]
			m := firstCodeSpan.FindStringSubmatch(cells[0])
			if m == nil || len(cells) < 3 {
				t.Fatalf("%s:%d: a reference row is | `key` | default | meaning |", referencePage, i+1)
			}
			rows = append(rows, referenceRow{key: m[1], dflt: cells[1], line: i + 1})
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no \"## Config reference\" table", referencePage)
	}
	return rows
}

// TestReferenceListsEveryKey: every key of the config's structs has a row in
// the reference, every row names a key the structs have, and a row's
// default is the one the config applies.
func TestReferenceListsEveryKey(t *testing.T) {
	want := configKeys(t)
	defaults := configDefaults()
	seen := map[string]bool{}
	for _, row := range readReference(t) {
		if seen[row.key] {
			t.Errorf("%s:%d: %s is listed twice", referencePage, row.line, row.key)
		}
		seen[row.key] = true
		if !want[row.key] {
			t.Errorf("%s:%d: %s is not a config key (the structs of config/config.go have no such field)", referencePage, row.line, row.key)
			continue
		}
		if d, ok := defaults[row.key]; ok {
			if err := sameDefault(row.dflt, d); err != nil {
				t.Errorf("%s:%d: %s: %v", referencePage, row.line, row.key, err)
			}
		}
	}
	var missing []string
	for k := range want {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	for _, k := range missing {
		t.Errorf("%s: the config reference has no row for %s", referencePage, k)
	}
}

// configDefaults are the defaults a config gets for the keys it leaves out:
// viper's, and the policy's.
func configDefaults() map[string]any {
	v := viper.New()
	setDefaults(v)
	out := map[string]any{}
	for _, k := range v.AllKeys() {
		out[k] = v.Get(k)
	}
	pol := reflect.ValueOf(policyKeys(ir.DefaultPolicy()))
	for i := 0; i < pol.NumField(); i++ {
		out["policy."+pol.Type().Field(i).Tag.Get("mapstructure")] = pol.Field(i).Interface()
	}
	return out
}

// sameDefault compares a reference's default cell with the config's: as
// numbers, as durations, or as text.
func sameDefault(cell string, value any) error {
	m := firstCodeSpan.FindStringSubmatch(cell)
	if m == nil {
		return fmt.Errorf("the default column says %q where the config applies %v: write it in a code span", strings.TrimSpace(cell), value)
	}
	doc, got := m[1], fmt.Sprint(value)
	if a, errA := strconv.ParseFloat(doc, 64); errA == nil {
		if b, errB := strconv.ParseFloat(got, 64); errB == nil && a == b {
			return nil
		}
	}
	if a, errA := time.ParseDuration(doc); errA == nil {
		if b, errB := time.ParseDuration(got); errB == nil && a == b {
			return nil
		}
	}
	if doc == got {
		return nil
	}
	return fmt.Errorf("the reference says the default is %s, the config applies %s", doc, got)
}

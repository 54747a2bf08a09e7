// Package keys decodes a section of configuration (the nested maps viper or
// a YAML reader produce) into a typed struct with mapstructure, and words
// every problem for the person editing the file: each error names the key,
// and a key the struct does not have is refused with the keys it does.
//
// Values may arrive as YAML types or as strings (environment variables and
// flags); numbers are converted strictly: 2.0 may fill an integer, 2.5 may
// not, and a string must parse whole.
package keys

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
)

// Options word the errors of one Decode.
type Options struct {
	// Name turns a key's path within the section ("policy.max_in_list",
	// "domains.age") into the name the error shows; nil shows the path.
	Name func(path string) string
	// Unknown words the refusal of a key the struct does not have, given
	// the keys it does have at that place; nil says "unknown key (known: ...)".
	Unknown func(key string, known []string) string
}

// Decode fills dst (a pointer to a struct) from raw. Fields absent from raw
// keep the values dst already holds, so defaults are set before the call.
// The errors, one per bad key, are joined in the order of their names.
func Decode(raw any, dst any, opts Options) error {
	if opts.Name == nil {
		opts.Name = func(path string) string { return path }
	}
	if opts.Unknown == nil {
		opts.Unknown = func(_ string, known []string) string {
			return "unknown key (known: " + strings.Join(known, ", ") + ")"
		}
	}
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:     dst,
		DecodeHook: strictScalars,
	})
	if err != nil {
		return err
	}
	var errs []error
	if err := dec.Decode(raw); err != nil {
		errs = append(errs, worded(err, opts.Name)...)
	}
	// Unknown keys are found by walking raw against dst's type rather than
	// from mapstructure's metadata, which is left empty when a value fails.
	for _, u := range unknownKeys(raw, reflect.TypeOf(dst), "") {
		errs = append(errs, fmt.Errorf("%s: %s", opts.Name(u.path), opts.Unknown(u.key, u.known)))
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

// worded turns mapstructure's errors into "name: problem" lines.
func worded(err error, name func(string) string) []error {
	var out []error
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var de *mapstructure.DecodeError
		if !errors.As(err, &de) {
			out = append(out, err)
			return
		}
		if de != err {
			// A wrapper around the errors of several keys.
			walk(errors.Unwrap(err))
			return
		}
		{
			msg := de.Unwrap()
			var ut *mapstructure.UnconvertibleTypeError
			if errors.As(msg, &ut) {
				msg = fmt.Errorf("must be %s, got %s", kindWord(ut.Expected.Type()), Describe(ut.Value))
			}
			out = append(out, fmt.Errorf("%s: %w", name(dotted(de.Name())), msg))
		}
	}
	walk(err)
	return out
}

// dotted writes mapstructure's "tables[people].policy" as "tables.people.policy".
func dotted(path string) string {
	path = strings.ReplaceAll(path, "[", ".")
	path = strings.ReplaceAll(path, "]", "")
	return strings.TrimPrefix(path, ".")
}

type unknownKey struct {
	path, key string
	known     []string
}

// unknownKeys lists the keys of raw that t (a struct, a map of them, or a
// pointer to either) has no place for, with the keys it has there.
func unknownKeys(raw any, t reflect.Type, path string) []unknownKey {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	var out []unknownKey
	switch t.Kind() {
	case reflect.Map:
		for k, v := range m {
			out = append(out, unknownKeys(v, t.Elem(), join(k))...)
		}
	case reflect.Struct:
		for k, v := range m {
			f, ok := fieldByKey(t, k)
			if !ok {
				out = append(out, unknownKey{path: join(k), key: k, known: knownKeys(t)})
				continue
			}
			out = append(out, unknownKeys(v, f.Type, join(k))...)
		}
	}
	return out
}

// knownKeys lists the keys struct type t is read from, sorted.
func knownKeys(t reflect.Type) []string {
	var known []string
	for i := 0; i < t.NumField(); i++ {
		if k, ok := keyOf(t.Field(i)); ok && t.Field(i).Tag.Get("keys") != "hidden" {
			known = append(known, k)
		}
	}
	sort.Strings(known)
	return known
}

// fieldByKey finds the field key is read into; keys match without regard
// to case, as mapstructure matches them.
func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if k, ok := keyOf(t.Field(i)); ok && strings.EqualFold(k, key) {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// keyOf is the key a field is read from (its mapstructure tag, else its
// name), and false for an unexported field. A field tagged keys:"hidden" is
// read but not offered as known: a key read only to be refused with a
// message of its own.
func keyOf(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
	if tag == "" {
		return f.Name, true
	}
	return tag, tag != "-"
}

// strictScalars converts the scalar spellings a config arrives in (YAML
// types, or strings from the environment and flags) into the field's type,
// and refuses what would lose information: a fraction into an integer, a
// number into a boolean.
func strictScalars(from, to reflect.Value) (any, error) {
	if !from.IsValid() || !from.CanInterface() {
		return nil, nil
	}
	raw := from.Interface()
	if from.Kind() == reflect.Interface {
		raw = from.Elem().Interface()
	}
	target := to.Type()
	for target.Kind() == reflect.Pointer {
		target = target.Elem()
	}
	if target == reflect.TypeOf(time.Duration(0)) {
		if s, ok := raw.(string); ok {
			d, err := time.ParseDuration(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("must be a duration such as 10s, got %s", Describe(raw))
			}
			return d, nil
		}
	}
	switch target.Kind() {
	case reflect.Struct, reflect.Map:
		if _, ok := raw.(map[string]any); !ok && raw != nil {
			return nil, fmt.Errorf("must be a map of keys, got %s", Describe(raw))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if raw == nil {
			return nil, fmt.Errorf("must be an integer, got %s", Describe(raw))
		}
		n, ok := AsInt64(raw)
		if !ok {
			return nil, fmt.Errorf("must be an integer, got %s", Describe(raw))
		}
		if reflect.Zero(target).OverflowInt(n) {
			return nil, fmt.Errorf("must be an integer that fits %s, got %d", target, n)
		}
		return n, nil
	case reflect.Float32, reflect.Float64:
		f, ok := AsFloat64(raw)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("must be a finite number, got %s", Describe(raw))
		}
		return f, nil
	case reflect.Bool:
		switch v := raw.(type) {
		case bool:
			return v, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "true", "yes", "on", "1":
				return true, nil
			case "false", "no", "off", "0":
				return false, nil
			}
		}
		return nil, fmt.Errorf("must be true or false, got %s", Describe(raw))
	case reflect.String:
		switch raw.(type) {
		case string:
			return raw, nil
		case int, int64, float64, bool:
			// YAML reads `sex: [F, M]` as strings but `zip: 2000` as a
			// number; a string field takes the text as written.
			return fmt.Sprint(raw), nil
		}
		return nil, fmt.Errorf("must be a string, got %s", Describe(raw))
	}
	return raw, nil
}

func kindWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Map, reflect.Struct:
		return "a map of keys"
	case reflect.Slice:
		return "a list"
	}
	return "a " + t.String()
}

// AsInt64 converts the integer spellings a config decoder produces: any
// integer type, a whole float (YAML and JSON tools sometimes write 2.0), or
// a string of either.
func AsInt64(raw any) (int64, bool) {
	v := reflect.ValueOf(raw)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.Uint() > math.MaxInt64 {
			return 0, false
		}
		return int64(v.Uint()), true
	case reflect.Float32, reflect.Float64:
		return wholeFloat(v.Float())
	case reflect.String:
		s := strings.TrimSpace(v.String())
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return wholeFloat(f)
		}
	}
	return 0, false
}

func wholeFloat(f float64) (int64, bool) {
	// 2^63 is exactly representable; anything at or beyond it overflows.
	if f != math.Trunc(f) || f >= 1<<63 || f < -(1<<63) {
		return 0, false
	}
	return int64(f), true
}

// AsFloat64 converts the number spellings a config decoder produces.
func AsFloat64(raw any) (float64, bool) {
	v := reflect.ValueOf(raw)
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return v.Float(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint()), true
	case reflect.String:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.String()), 64)
		return f, err == nil
	}
	return 0, false
}

// Describe shows a bad value and its type, briefly. Config values are the
// operator's own text, so echoing them is safe and helpful.
func Describe(raw any) string {
	switch v := raw.(type) {
	case nil:
		return "nothing"
	case string:
		if len(v) > 60 {
			v = v[:60] + "..."
		}
		return strconv.Quote(v)
	case bool:
		return fmt.Sprintf("%t (a boolean)", v)
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	default:
		s := fmt.Sprint(v)
		if len(s) > 60 {
			s = s[:60] + "..."
		}
		return s
	}
}

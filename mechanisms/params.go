package mechanisms

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Parameters arrive from viper: YAML numbers decode as int or float64, values
// from the environment or flags as strings, and keys are lower-cased. The
// getters below accept every one of those spellings, match keys without
// regard to case, and word their errors so that the config's author can find
// the line to fix:
//
//	mechanism parameter "D": must be an integer >= 1, got -2

// paramErrorf builds the error for a bad parameter value; format may wrap
// an underlying error with %w.
func paramErrorf(key, format string, args ...any) error {
	return fmt.Errorf("mechanism parameter %q: "+format, append([]any{key}, args...)...)
}

// paramLookup finds key in p. Keys match case-insensitively because viper
// lower-cases configuration keys ("D" in the YAML arrives as "d").
func paramLookup(p Params, key string) (any, bool) {
	if v, ok := p[key]; ok {
		return v, true
	}
	for k, v := range p {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

// paramInt reads an integer parameter in [min, max], or def when absent.
// Whole-valued floats (2.0) are accepted since YAML and JSON tools sometimes
// write integers that way; 2.5 is not.
func paramInt(p Params, key string, def, min, max int64) (int64, error) {
	raw, ok := paramLookup(p, key)
	if !ok {
		return def, nil
	}
	want := strings.TrimSpace("must be an integer " + intRangeText(min, max))
	n, ok := paramAsInt64(raw)
	if !ok {
		return 0, paramErrorf(key, "%s, got %s", want, describeParamValue(raw))
	}
	if n < min || n > max {
		return 0, paramErrorf(key, "%s, got %d", want, n)
	}
	return n, nil
}

// paramFloat reads a finite number in [min, max], or def when absent.
func paramFloat(p Params, key string, def, min, max float64) (float64, error) {
	raw, ok := paramLookup(p, key)
	if !ok {
		return def, nil
	}
	want := strings.TrimSpace("must be a number " + floatRangeText(min, max))
	f, ok := paramAsFloat64(raw)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, paramErrorf(key, "%s, got %s", want, describeParamValue(raw))
	}
	if f < min || f > max {
		return 0, paramErrorf(key, "%s, got %s", want, strconv.FormatFloat(f, 'g', -1, 64))
	}
	return f, nil
}

// paramBool reads a boolean, or def when absent. Strings from the
// environment may say true/false, yes/no, on/off or 1/0.
func paramBool(p Params, key string, def bool) (bool, error) {
	raw, ok := paramLookup(p, key)
	if !ok {
		return def, nil
	}
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
	return false, paramErrorf(key, "must be true or false, got %s", describeParamValue(raw))
}

// paramString reads a non-empty string, or def when absent.
func paramString(p Params, key, def string) (string, error) {
	raw, ok := paramLookup(p, key)
	if !ok {
		return def, nil
	}
	s, ok := raw.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", paramErrorf(key, "must be a non-empty string, got %s", describeParamValue(raw))
	}
	return strings.TrimSpace(s), nil
}

// paramChoice reads a string that must be one of choices (compared without
// regard to case), or def when absent. It returns the choice as listed.
func paramChoice(p Params, key, def string, choices ...string) (string, error) {
	raw, ok := paramLookup(p, key)
	if !ok {
		return def, nil
	}
	if s, ok := raw.(string); ok {
		for _, c := range choices {
			if strings.EqualFold(strings.TrimSpace(s), c) {
				return c, nil
			}
		}
	}
	return "", paramErrorf(key, "must be one of %s, got %s", paramQuoteList(choices), describeParamValue(raw))
}

// checkKnownParams refuses parameters the mechanism does not have, so that a
// typo in the config is an error rather than a silently ignored setting. It
// also refuses a key given twice in different case ("D" and "d").
func checkKnownParams(p Params, known ...string) error {
	seen := map[string]string{}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys) // report the same key first on every run
	for _, k := range keys {
		lower := strings.ToLower(k)
		if prev, dup := seen[lower]; dup {
			return paramErrorf(k, "given twice (as %q and %q)", prev, k)
		}
		seen[lower] = k
		if !slices.ContainsFunc(known, func(n string) bool { return strings.EqualFold(n, k) }) {
			if len(known) == 0 {
				return paramErrorf(k, "unknown parameter: this mechanism takes no parameters")
			}
			msg := "unknown parameter (known: " + strings.Join(known, ", ") + ")"
			if near := nearestParamName(k, known); near != "" {
				msg = fmt.Sprintf("unknown parameter; did you mean %q? (known: %s)", near, strings.Join(known, ", "))
			}
			return paramErrorf(k, "%s", msg)
		}
	}
	return nil
}

// nearestParamName returns the known name within edit distance 2 of key, if
// exactly one is closest.
func nearestParamName(key string, known []string) string {
	best, bestDist, tie := "", 3, false
	for _, k := range known {
		d := paramEditDistance(strings.ToLower(key), strings.ToLower(k))
		switch {
		case d < bestDist:
			best, bestDist, tie = k, d, false
		case d == bestDist:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// paramEditDistance is the Levenshtein distance between two short strings.
func paramEditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// paramAsInt64 converts the integer spellings a config decoder produces.
func paramAsInt64(raw any) (int64, bool) {
	switch v := raw.(type) {
	case int:
		return int64(v), true
	case int8:
		return int64(v), true
	case int16:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case uint:
		return paramUintToInt64(uint64(v))
	case uint8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case uint32:
		return int64(v), true
	case uint64:
		return paramUintToInt64(v)
	case float32:
		return paramWholeFloatToInt64(float64(v))
	case float64:
		return paramWholeFloatToInt64(v)
	case string:
		s := strings.TrimSpace(v)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return paramWholeFloatToInt64(f)
		}
	}
	return 0, false
}

func paramUintToInt64(u uint64) (int64, bool) {
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

func paramWholeFloatToInt64(f float64) (int64, bool) {
	// 2^63 is exactly representable; anything at or beyond it overflows.
	if f != math.Trunc(f) || f >= 1<<63 || f < -(1<<63) {
		return 0, false
	}
	return int64(f), true
}

// paramAsFloat64 converts the number spellings a config decoder produces.
func paramAsFloat64(raw any) (float64, bool) {
	switch v := raw.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil
	}
	if n, ok := paramAsInt64(raw); ok {
		return float64(n), true
	}
	if u, ok := raw.(uint64); ok {
		return float64(u), true
	}
	return 0, false
}

// intRangeText words [min, max] for an error message.
func intRangeText(min, max int64) string {
	switch {
	case min == math.MinInt64 && max == math.MaxInt64:
		return ""
	case max == math.MaxInt64:
		return fmt.Sprintf(">= %d", min)
	case min == math.MinInt64:
		return fmt.Sprintf("<= %d", max)
	default:
		return fmt.Sprintf("between %d and %d", min, max)
	}
}

// floatRangeText words [min, max] for an error message.
func floatRangeText(min, max float64) string {
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch {
	case math.IsInf(min, -1) && math.IsInf(max, 1):
		return ""
	case math.IsInf(max, 1):
		return ">= " + g(min)
	case math.IsInf(min, -1):
		return "<= " + g(max)
	default:
		return "between " + g(min) + " and " + g(max)
	}
}

// describeParamValue shows a bad value and its type, briefly. Config values
// are the operator's own text, so echoing them is safe and helpful.
func describeParamValue(raw any) string {
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

func paramQuoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

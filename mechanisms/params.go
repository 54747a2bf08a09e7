package mechanisms

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"countwall/config/keys"
)

// Each mechanism reads its parameters into a struct of its own, which holds
// the defaults before decodeParams fills in what the config gives. Keys match
// without regard to case (viper lower-cases them: "D" in the YAML arrives as
// "d"); values may be YAML numbers and booleans or strings from the
// environment. Errors are worded so that the config's author can find the
// line to fix:
//
//	mechanism parameter "D": must be an integer between 1 and 1000, got -2

// decodeParams fills dst, a pointer to a mechanism's parameter struct, from
// p. A key the struct does not have is refused, so that a typo in the config
// is an error rather than a silently ignored setting, and so is one key
// given twice in different case ("D" and "d").
func decodeParams(p Params, dst any) error {
	seen := map[string]string{}
	names := make([]string, 0, len(p))
	for k := range p {
		names = append(names, k)
	}
	slices.Sort(names) // report the same key first on every run
	for _, k := range names {
		lower := strings.ToLower(k)
		if prev, dup := seen[lower]; dup {
			return paramErrorf(k, "given twice (as %q and %q)", prev, k)
		}
		seen[lower] = k
	}
	return keys.Decode(map[string]any(p), dst, keys.Options{
		Name:    func(key string) string { return fmt.Sprintf("mechanism parameter %q", key) },
		Unknown: unknownParam,
	})
}

// paramErrorf builds the error for a bad parameter value; format may wrap
// an underlying error with %w.
func paramErrorf(key, format string, args ...any) error {
	return fmt.Errorf("mechanism parameter %q: "+format, append([]any{key}, args...)...)
}

// unknownParam words the refusal of a parameter the mechanism does not have.
func unknownParam(key string, known []string) string {
	if len(known) == 0 {
		return "unknown parameter: this mechanism takes no parameters"
	}
	if near := nearestParamName(key, known); near != "" {
		return fmt.Sprintf("unknown parameter; did you mean %q? (known: %s)", near, strings.Join(known, ", "))
	}
	return "unknown parameter (known: " + strings.Join(known, ", ") + ")"
}

// intParamIn checks that n is in [min, max].
func intParamIn(key string, n, min, max int64) error {
	if n >= min && n <= max {
		return nil
	}
	var want string
	switch {
	case max == math.MaxInt64:
		want = fmt.Sprintf(">= %d", min)
	case min == math.MinInt64:
		want = fmt.Sprintf("<= %d", max)
	default:
		want = fmt.Sprintf("between %d and %d", min, max)
	}
	return paramErrorf(key, "must be an integer %s, got %d", want, n)
}

// floatParamIn checks that f is in [min, max].
func floatParamIn(key string, f, min, max float64) error {
	if f >= min && f <= max {
		return nil
	}
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	return paramErrorf(key, "must be a number between %s and %s, got %s", g(min), g(max), g(f))
}

// choiceParam returns the one of choices s names (compared without regard
// to case or surrounding space), as listed.
func choiceParam(key, s string, choices ...string) (string, error) {
	for _, c := range choices {
		if strings.EqualFold(strings.TrimSpace(s), c) {
			return c, nil
		}
	}
	q := make([]string, len(choices))
	for i, c := range choices {
		q[i] = strconv.Quote(c)
	}
	return "", paramErrorf(key, "must be one of %s, got %s", strings.Join(q, ", "), keys.Describe(s))
}

// nonEmptyParam returns s trimmed, or an error when nothing is left.
func nonEmptyParam(key, s string) (string, error) {
	if strings.TrimSpace(s) == "" {
		return "", paramErrorf(key, "must be a non-empty string, got %s", keys.Describe(s))
	}
	return strings.TrimSpace(s), nil
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

package pglex

// ContainsFold reports whether s holds sub with ASCII letters matched in
// either case; sub is in lower case. It is the cheap test before a lexing
// that only a statement holding some word needs: a keyword is that word's
// letters in the text, in any case, whatever surrounds it.
func ContainsFold(s, sub string) bool {
	return ContainsAnyFold(s, []string{sub})
}

// ContainsAnyFold is ContainsFold for several words at once, in one pass
// over s.
func ContainsAnyFold(s string, subs []string) bool {
	var first [256]bool
	for _, sub := range subs {
		if sub == "" {
			return true
		}
		first[sub[0]] = true
	}
	for i := 0; i < len(s); i++ {
		if !first[lowerASCII(s[i])] {
			continue
		}
		for _, sub := range subs {
			if hasPrefixFold(s[i:], sub) {
				return true
			}
		}
	}
	return false
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case; prefix is lower
// case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for j := 0; j < len(prefix); j++ {
		if lowerASCII(s[j]) != prefix[j] {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

package snapshot

// SQLite's LIKE, as countwall runs it (case_sensitive_like on, ESCAPE '\'),
// over any bytes a column can hold. SQLite reads both the pattern and the
// value as NUL-terminated UTF-8 with a decoder of its own that never fails:
// a lead byte takes every continuation byte after it, a stray continuation
// byte reads as itself, and a sequence that decodes to an overlong form, a
// surrogate or U+FFFE/U+FFFF reads as U+FFFD. The snapshot decodes the same
// way, so that invalid UTF-8 and BLOBs match here exactly as in SQLite and no
// value's bytes send a query elsewhere.

// likeEscape is the escape character of countwall's LIKE (PostgreSQL's
// default, which the SQL backend passes as ESCAPE '\').
const likeEscape = '\\'

// utf8Lead is the value bits a lead byte 0xC0..0xFF contributes before its
// continuation bytes (SQLite's sqlite3Utf8Trans1).
var utf8Lead = [64]uint32{
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00,
}

// sqliteRune reads one character of s as SQLite does, returning it and the
// bytes it took; 0 at the end of s or at a NUL byte, where SQLite's strings
// end.
func sqliteRune(s string) (r uint32, size int) {
	if len(s) == 0 || s[0] == 0 {
		return 0, 0
	}
	c := uint32(s[0])
	if c < 0xc0 {
		return c, 1
	}
	c = utf8Lead[c-0xc0]
	n := 1
	for n < len(s) && s[n]&0xc0 == 0x80 {
		c = c<<6 + uint32(s[n]&0x3f)
		n++
	}
	if c < 0x80 || c&0xfffff800 == 0xd800 || c&0xfffffffe == 0xfffe {
		c = 0xfffd
	}
	return c, n
}

// likeMatches reports whether value matches pattern under SQLite's LIKE with
// case_sensitive_like on and ESCAPE '\' (patternCompare in SQLite's func.c):
// '%' matches any run of characters, '_' exactly one, a backslash makes the
// next character literal, and a pattern ending in a lone backslash matches
// nothing.
func likeMatches(value, pattern string) bool { return likeCompare(pattern, value) == likeMatch }

// The three outcomes of patternCompare: after a failed '%' no shorter
// suffix of the value can match either, which ends the search early.
const (
	likeMatch = iota
	likeNoMatch
	likeNoWildcardMatch
)

func likeCompare(p, s string) int {
	for {
		c, n := sqliteRune(p)
		if n == 0 {
			break
		}
		p = p[n:]
		if c == '%' {
			return likeAfterPercent(p, s)
		}
		escaped := false
		if c == likeEscape {
			if c, n = sqliteRune(p); n == 0 {
				return likeNoMatch
			}
			p, escaped = p[n:], true
		}
		c2, n2 := sqliteRune(s)
		s = s[n2:]
		if c == c2 || (c == '_' && !escaped && n2 != 0) {
			continue
		}
		return likeNoMatch
	}
	if len(s) == 0 || s[0] == 0 {
		return likeMatch
	}
	return likeNoMatch
}

// likeAfterPercent continues a match after a '%': each further '%' is
// skipped, each '_' takes one character of s, and then every position of s
// where the next pattern character stands is tried.
func likeAfterPercent(p, s string) int {
	var c uint32
	for {
		var n int
		c, n = sqliteRune(p)
		if n == 0 {
			return likeMatch // '%' at the end matches the rest
		}
		p = p[n:]
		if c == '%' {
			continue
		}
		if c != '_' {
			break
		}
		_, m := sqliteRune(s)
		if m == 0 {
			return likeNoWildcardMatch
		}
		s = s[m:]
	}
	if c == likeEscape {
		var n int
		if c, n = sqliteRune(p); n == 0 {
			return likeNoWildcardMatch
		}
		p = p[n:]
	}
	for {
		c2, n := sqliteRune(s)
		if n == 0 {
			return likeNoWildcardMatch
		}
		s = s[n:]
		if c2 != c {
			continue
		}
		if m := likeCompare(p, s); m != likeNoMatch {
			return m
		}
	}
}

package pgtypes

import (
	"errors"
	"strings"
)

// An array's text form is what array_in reads and array_out writes: `{1,2,3}`,
// `{"a b",NULL,"with \"quote\""}`. Drivers send an array parameter in it
// (node-postgres, lib/pq, psycopg) and a '{...}' constant is written in it.
// Only one dimension is read: a count compares a column with a list.

// ErrMalformedArray is a text that is not an array literal (22P02 in
// PostgreSQL); ErrNestedArray is one of more than one dimension.
var (
	ErrMalformedArray = errors.New("malformed array literal")
	ErrNestedArray    = errors.New("multidimensional array")
)

// ParseArray reads an array's text form into its elements; a nil element
// is NULL (an unquoted NULL, in any case).
func ParseArray(s string) ([]*string, error) {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	if strings.HasPrefix(s, "[") {
		// A dimension decoration, [1:3]={...}: its bounds say nothing a
		// list of values needs.
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return nil, ErrMalformedArray
		}
		s = strings.TrimLeft(s[eq+1:], " \t\n\r\v\f")
	}
	if !strings.HasPrefix(s, "{") {
		return nil, ErrMalformedArray
	}
	r := arrayReader{s: s, i: 1}
	elems, err := r.elements()
	if err != nil {
		return nil, err
	}
	if strings.TrimRight(s[r.i:], " \t\n\r\v\f") != "" {
		return nil, ErrMalformedArray
	}
	return elems, nil
}

type arrayReader struct {
	s string
	i int
}

// elements reads from just past '{' to just past the matching '}'.
func (r *arrayReader) elements() ([]*string, error) {
	var out []*string
	r.space()
	if r.i < len(r.s) && r.s[r.i] == '}' {
		r.i++
		return out, nil
	}
	for {
		r.space()
		if r.i < len(r.s) && r.s[r.i] == '{' {
			return nil, ErrNestedArray
		}
		e, err := r.element()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if r.i >= len(r.s) {
			return nil, ErrMalformedArray
		}
		c := r.s[r.i]
		r.i++
		if c == '}' {
			return out, nil
		}
		if c != ',' {
			return nil, ErrMalformedArray
		}
	}
}

// element reads one element up to (not past) the ',' or '}' after it.
func (r *arrayReader) element() (*string, error) {
	var b strings.Builder
	quoted, seen := false, false
	trail := 0 // unescaped, unquoted spaces at the end of b, which go
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"':
			end, err := r.quoted(&b)
			if err != nil {
				return nil, err
			}
			r.i, quoted, seen, trail = end, true, true, 0
			continue
		case c == '\\':
			if r.i+1 >= len(r.s) {
				return nil, ErrMalformedArray
			}
			b.WriteByte(r.s[r.i+1])
			r.i += 2
			quoted, seen, trail = true, true, 0
			continue
		case c == ',' || c == '}':
			return r.finish(b.String()[:b.Len()-trail], quoted, seen)
		case c == '{':
			return nil, ErrMalformedArray
		case isArraySpace(c):
			if seen {
				b.WriteByte(c)
				trail++
			}
		default:
			b.WriteByte(c)
			seen, trail = true, 0
		}
		r.i++
	}
	return nil, ErrMalformedArray
}

// quoted reads a "..." section into b and returns where it ends.
func (r *arrayReader) quoted(b *strings.Builder) (int, error) {
	for j := r.i + 1; j < len(r.s); j++ {
		switch r.s[j] {
		case '\\':
			if j+1 >= len(r.s) {
				return 0, ErrMalformedArray
			}
			j++
			b.WriteByte(r.s[j])
		case '"':
			return j + 1, nil
		default:
			b.WriteByte(r.s[j])
		}
	}
	return 0, ErrMalformedArray
}

func (r *arrayReader) finish(text string, quoted, seen bool) (*string, error) {
	if !seen {
		return nil, ErrMalformedArray // {,} or {a,}
	}
	if !quoted && strings.EqualFold(text, "null") {
		return nil, nil
	}
	return &text, nil
}

func (r *arrayReader) space() {
	for r.i < len(r.s) && isArraySpace(r.s[r.i]) {
		r.i++
	}
}

func isArraySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// FormatArray writes elements in an array's text form, quoting an element
// as array_out does (nil is NULL).
func FormatArray(elems []*string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		switch {
		case e == nil:
			b.WriteString("NULL")
		case needsArrayQuotes(*e):
			b.WriteByte('"')
			for j := 0; j < len(*e); j++ {
				if c := (*e)[j]; c == '"' || c == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte((*e)[j])
			}
			b.WriteByte('"')
		default:
			b.WriteString(*e)
		}
	}
	b.WriteByte('}')
	return b.String()
}

func needsArrayQuotes(s string) bool {
	if s == "" || strings.EqualFold(s, "null") {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '{' || c == '}' || c == ',' || c == '"' || c == '\\' || isArraySpace(c) {
			return true
		}
	}
	return false
}

package pgtypes

import (
	"errors"
	"strconv"
	"strings"
)

// An array's text form is what array_in reads and array_out writes: `{1,2,3}`,
// `{"a b",NULL,"with \"quote\""}`. Drivers send an array parameter in it
// (node-postgres, lib/pq, psycopg) and a '{...}' constant is written in it.
// Only one dimension is read: a count compares a column with a list.

// ErrMalformedArray is a text that is not an array literal (22P02 in
// PostgreSQL): every *ArrayError wraps it. ErrNestedArray is one of more
// than one dimension, which PostgreSQL reads and a count does not.
var (
	ErrMalformedArray = errors.New("malformed array literal")
	ErrNestedArray    = errors.New("multidimensional array")
)

// ArrayError is why a text is not an array literal, in array_in's words:
// Detail is PostgreSQL's DETAIL (`Unexpected end of input.`), and Bounds
// is set for an upper bound below the lower one, which PostgreSQL reports
// as 2202E rather than 22P02.
type ArrayError struct {
	Detail string
	Bounds bool
}

func (e *ArrayError) Error() string {
	if e.Bounds {
		return "upper bound cannot be less than lower bound"
	}
	return "malformed array literal: " + e.Detail
}

func (e *ArrayError) Unwrap() error { return ErrMalformedArray }

func malformed(detail string) error { return &ArrayError{Detail: detail} }

func unexpected(c byte) error {
	return malformed(`Unexpected "` + string(c) + `" character.`)
}

var (
	errEndOfInput = malformed("Unexpected end of input.")
	errElement    = malformed("Unexpected array element.")
)

// ParseArray reads an array's text form into its elements; a nil element
// is NULL (an unquoted NULL, in any case). A dimension decoration
// ([1:3]={...}) must match the elements it announces.
func ParseArray(s string) ([]*string, error) {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	want := -1
	if strings.HasPrefix(s, "[") {
		var err error
		if want, s, err = dimension(s); err != nil {
			return nil, err
		}
	}
	if !strings.HasPrefix(s, "{") {
		return nil, malformed(`Array value must start with "{" or dimension information.`)
	}
	r := arrayReader{s: s, i: 1}
	elems, err := r.elements()
	if err != nil {
		return nil, err
	}
	if strings.TrimRight(s[r.i:], " \t\n\r\v\f") != "" {
		return nil, malformed("Junk after closing right brace.")
	}
	if want >= 0 && want != len(elems) {
		return nil, malformed("Specified array dimensions do not match array contents.")
	}
	return elems, nil
}

// dimension reads a decoration [lo:hi]= or [hi]= (lower bound 1): the
// number of elements it announces, and the text after its '='.
func dimension(s string) (n int, rest string, err error) {
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return 0, "", malformed(`Missing "]" after array dimensions.`)
	}
	lo, hi, ranged := strings.Cut(s[1:end], ":")
	if !ranged {
		lo, hi = "1", lo
	}
	l, errL := strconv.Atoi(lo)
	h, errH := strconv.Atoi(hi)
	if errL != nil || errH != nil || lo == "" || lo[0] == '+' || hi[0] == '+' {
		return 0, "", malformed(`"[" must introduce explicitly-specified array dimensions.`)
	}
	rest = strings.TrimLeft(s[end+1:], " \t\n\r\v\f")
	switch {
	case strings.HasPrefix(rest, "["):
		return 0, "", ErrNestedArray
	case !strings.HasPrefix(rest, "="):
		return 0, "", malformed(`Missing "=" after array dimensions.`)
	case h < l:
		return 0, "", &ArrayError{Bounds: true}
	}
	return h - l + 1, strings.TrimLeft(rest[1:], " \t\n\r\v\f"), nil
}

type arrayReader struct {
	s string
	i int
}

// elements reads from just past '{' to just past the matching '}'.
func (r *arrayReader) elements() ([]*string, error) {
	out := []*string{} // {} is an empty list, not a missing one
	r.space()
	switch {
	case r.i >= len(r.s):
		return nil, errEndOfInput
	case r.s[r.i] == '}':
		r.i++
		return out, nil
	case r.s[r.i] == '{':
		return nil, ErrNestedArray
	}
	for {
		e, err := r.element()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		c := r.s[r.i] // element stops at ',' or '}'
		r.i++
		if c == '}' {
			return out, nil
		}
	}
}

// element reads one element, from just after '{' or ',', up to (not
// past) the ',' or '}' after it, as array_in reads it: quoted whole, or
// unquoted with backslash escapes and its outer spaces dropped.
func (r *arrayReader) element() (*string, error) {
	r.space()
	if r.i >= len(r.s) {
		return nil, errEndOfInput
	}
	switch c := r.s[r.i]; c {
	case '"':
		text, err := r.quoted()
		if err != nil {
			return nil, err
		}
		r.space()
		if err := r.delimiter(); err != nil {
			return nil, err
		}
		return &text, nil
	case ',', '}', '{':
		return nil, unexpected(c)
	}
	var b strings.Builder
	escaped := false
	trail := 0 // unescaped spaces at the end of b, which go
	for ; r.i < len(r.s); r.i++ {
		c := r.s[r.i]
		switch {
		case c == ',' || c == '}':
			text := b.String()[:b.Len()-trail]
			if !escaped && strings.EqualFold(text, "null") {
				return nil, nil
			}
			return &text, nil
		case c == '\\':
			if r.i+1 >= len(r.s) {
				return nil, errEndOfInput
			}
			r.i++
			b.WriteByte(r.s[r.i])
			escaped, trail = true, 0
		case c == '"':
			return nil, errElement
		case c == '{':
			return nil, unexpected(c)
		case isArraySpace(c):
			b.WriteByte(c)
			trail++
		default:
			b.WriteByte(c)
			trail = 0
		}
	}
	return nil, errEndOfInput
}

// quoted reads a "..." element from its opening quote and returns its text.
func (r *arrayReader) quoted() (string, error) {
	var b strings.Builder
	for j := r.i + 1; j < len(r.s); j++ {
		switch r.s[j] {
		case '\\':
			if j+1 >= len(r.s) {
				return "", errEndOfInput
			}
			j++
			b.WriteByte(r.s[j])
		case '"':
			r.i = j + 1
			return b.String(), nil
		default:
			b.WriteByte(r.s[j])
		}
	}
	return "", errEndOfInput
}

// delimiter checks that a ',' or '}' comes next after a complete element.
func (r *arrayReader) delimiter() error {
	if r.i >= len(r.s) {
		return errEndOfInput
	}
	switch c := r.s[r.i]; c {
	case ',', '}':
		return nil
	case '\\', '{':
		return unexpected(c)
	}
	return errElement
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

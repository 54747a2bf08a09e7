package pglex

import (
	"countwall/pgerror"
	"reflect"
	"strings"
	"testing"
)

type tok struct {
	Kind Kind
	Text string
}

func kinds(toks []Token) []tok {
	out := make([]tok, len(toks))
	for i, t := range toks {
		out[i] = tok{t.Kind, t.Text}
	}
	return out
}

func TestLex(t *testing.T) {
	w := func(s string) tok { return tok{Word, s} }
	op := func(s string) tok { return tok{Op, s} }
	str := func(s string) tok { return tok{String, s} }
	tests := []struct {
		name, sql string
		want      []tok
	}{
		{"words fold to lower case", "SELECT Count FROM People", []tok{w("select"), w("count"), w("from"), w("people")}},
		{"quoted identifier keeps case", `"Sex" "default"`, []tok{{QuotedIdent, "Sex"}, {QuotedIdent, "default"}}},
		{"doubled quote in identifier", `"a""b"`, []tok{{QuotedIdent, `a"b`}}},
		{"doubled quote in string", `'it''s'`, []tok{str("it's")}},
		{"backslash is ordinary", `'F\'`, []tok{str(`F\`)}},
		{"the hostile interpolation", `sex = 'F\' AND suburb = ' OR age >= 0 --'`,
			[]tok{w("sex"), op("="), str(`F\`), w("and"), w("suburb"), op("="), str(" OR age >= 0 --")}},
		{"backslash escapes nothing", `'suburb\_0007'`, []tok{str(`suburb\_0007`)}},
		{"comment marks inside a string", `'a -- b /* c */'`, []tok{str("a -- b /* c */")}},
		{"string inside a comment", "x /* 'y */ z", []tok{w("x"), w("z")}},
		{"line comment", "x -- 'y\nz", []tok{w("x"), w("z")}},
		{"line comment ends at a carriage return", "sex = 'F' --\r AND age > 50", []tok{w("sex"), op("="), str("F"), w("and"), w("age"), op(">"), {Number, "50"}}},
		{"line comment ends at CR LF", "x --c\r\nz", []tok{w("x"), w("z")}},
		{"continuation over a CR comment line", "'a'\r-- c\r'b'", []tok{str("ab")}},
		{"nested comment", "a /* b /* c */ d */ e", []tok{w("a"), w("e")}},
		{"versioned comment is a comment", "a /*! WHERE b = 'x' */", []tok{w("a")}},
		{"continuation over a newline", "'a'\n  'b'", []tok{str("ab")}},
		{"continuation over a comment line", "'a'\n-- c\n'b'", []tok{str("ab")}},
		{"no continuation on one line", "'a' 'b'", []tok{str("a"), str("b")}},
		{"parameters", "$1 <> $12", []tok{{Param, "$1"}, op("<>"), {Param, "$12"}}},
		{"dollar inside a string is text", "'$1'", []tok{str("$1")}},
		{"!= is <>", "a != 1", []tok{w("a"), op("<>"), {Number, "1"}}},
		{"trailing minus splits", "a=-1", []tok{w("a"), op("="), op("-"), {Number, "1"}}},
		{"comment start ends an operator", "a=--x\n1", []tok{w("a"), op("="), {Number, "1"}}},
		{"numbers", "1 1.5 .5 1e3 2.5E-2 1.", []tok{{Number, "1"}, {Number, "1.5"}, {Number, ".5"}, {Number, "1e3"}, {Number, "2.5E-2"}, {Number, "1."}}},
		{"cast and punctuation", "a::int, (b).c;", []tok{w("a"), op("::"), w("int"), op(","), op("("), w("b"), op(")"), op("."), w("c"), op(";")}},
		{"identifier with digits and dollar", "a1$b _x", []tok{w("a1$b"), w("_x")}},
		{"non-ASCII identifier keeps its letters", "Ärger", []tok{w("Ärger")}},
		{"u without & is a word", "u & 1", []tok{w("u"), op("&"), {Number, "1"}}},
		{"e before a space is a word", "e 'x'", []tok{w("e"), str("x")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			toks, err := Lex(tc.sql)
			if err != nil {
				t.Fatalf("Lex(%q): %v", tc.sql, err)
			}
			if got := kinds(toks); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Lex(%q)\n got %v\nwant %v", tc.sql, got, tc.want)
			}
			for _, tk := range toks {
				if tc.sql[tk.Pos:tk.Pos+len(tk.Raw)] != tk.Raw {
					t.Errorf("token %+v: Raw is not the text at Pos", tk)
				}
			}
		})
	}
}

func TestLexRefusals(t *testing.T) {
	tests := []struct {
		name, sql string
		code      pgerror.Code
		mention   string
	}{
		{"unterminated string", "a = 'x", pgerror.SyntaxError, "unterminated quoted string"},
		{"string ending in a backslash is complete", "a = 'x\\'", "", ""},
		{"unterminated identifier", `"abc`, pgerror.SyntaxError, "unterminated quoted identifier"},
		{"zero-length identifier", `a = ""`, pgerror.SyntaxError, "zero-length delimited identifier"},
		{"unterminated comment", "a /* b", pgerror.SyntaxError, "unterminated /* comment"},
		{"unterminated nested comment", "a /* /* b */", pgerror.SyntaxError, "unterminated /* comment"},
		{"hash is no comment", "a # b", pgerror.SyntaxError, `at or near "#"`},
		{"backquotes", "`people`", pgerror.SyntaxError, "`"},
		{"escape string", `E'a\n'`, pgerror.FeatureNotSupported, "E'...'"},
		{"lower-case escape string", `x = e'a'`, pgerror.FeatureNotSupported, "E'...'"},
		{"dollar quoting", "$$a$$", pgerror.FeatureNotSupported, "dollar-quoted"},
		{"tagged dollar quoting", "$tag$a$tag$", pgerror.FeatureNotSupported, "dollar-quoted"},
		{"unicode string", "U&'d\\0061t'", pgerror.FeatureNotSupported, "U&"},
		{"unicode identifier", `u&"d\0061t"`, pgerror.FeatureNotSupported, "U&"},
		{"bit string", "B'101'", pgerror.FeatureNotSupported, "bit-string"},
		{"hex string", "X'1F'", pgerror.FeatureNotSupported, "bit-string"},
		{"national string", "N'x'", pgerror.FeatureNotSupported, "N'...'"},
		{"hex number", "0x1F", pgerror.SyntaxError, "trailing junk after numeric literal"},
		{"digit separator", "1_000", pgerror.SyntaxError, "trailing junk"},
		{"parameter junk", "$1a", pgerror.SyntaxError, "trailing junk after parameter"},
		{"parameter zero", "$0", pgerror.SyntaxError, "between $1"},
		{"parameter too high", "$1001", pgerror.SyntaxError, "between $1"},
		{"bare dollar", "$ 1", pgerror.SyntaxError, `at or near "$"`},
		{"lone colon", "a :b", pgerror.SyntaxError, `":"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Lex(tc.sql)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("Lex(%q): %v", tc.sql, err)
				}
				return
			}
			if got := pgerror.SQLState(err); got != tc.code {
				t.Fatalf("Lex(%q) = %v (SQLSTATE %q), want %s", tc.sql, err, got, tc.code)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("Lex(%q) error %q does not mention %q", tc.sql, err, tc.mention)
			}
		})
	}
}

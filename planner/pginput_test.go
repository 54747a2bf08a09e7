package planner

import (
	"math"
	"reflect"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
)

// Each input below was read by PostgreSQL 15 ('...'::numeric,
// '...'::float8, '...'::float4, '...'::int2 and '...'::int8), which gave
// the value or the SQLSTATE written beside it.

func TestReadNumericAsPostgreSQL(t *testing.T) {
	tests := []struct {
		in   string
		want string // numeric.text(), or a SQLSTATE
	}{
		{"30.5", "305e-1"}, {" 30.0 ", "3e1"}, {"+.5", "5e-1"}, {"5.", "5e0"}, {"-0.000", "0"}, {"007", "7e0"},
		{"1e 5", "1e5"}, {"1E+1", "1e1"}, {"NaN", "NaN"}, {" nan ", "NaN"}, {"-inf", "-Inf"}, {"Infinity", "+Inf"},
		{"+infinity", "+Inf"},
		// The storage format: at most 16383 decimals, a first digit at most
		// 10^131071, and an exponent within INT_MAX/2 in the text.
		{"1e-16383", "1e-16383"}, {"1e-16384", "22003"}, {"0.1e-16383", "22003"}, {"10e-16384", "22003"},
		{"0e-16384", "22003"}, {"0.0e-16382", "0"}, {"0.00e-16382", "22003"}, {"1e-9999999", "22003"},
		{"1e131071", "1e131071"}, {"9.9e131071", "99e131070"}, {"1e131072", "22003"},
		{"0e1000000000", "0"}, {"0e1073741822", "0"}, {"0e1073741823", "22003"}, {"0e-1073741823", "22003"},
		{"1e99999999999999999999", "22003"},
		{"", "22P02"}, {"x", "22P02"}, {"1..", "22P02"}, {"1.2.3", "22P02"}, {".", "22P02"}, {"1e", "22P02"},
		{"1_000", "22P02"}, {"0x10", "22P02"}, {"+nan", "22P02"}, {"nan(1)", "22P02"}, {"1e+ 5", "22P02"},
		{"\u00a01", "22P02"}, {"--1", "22P02"},
	}
	for _, tc := range tests {
		n, err := readNumeric(tc.in, subject{col: "age"})
		got := n.text()
		if err != nil {
			got = string(pgerror.SQLState(err))
		}
		if got != tc.want {
			t.Errorf("numeric %q: %s, PostgreSQL %s", tc.in, got, tc.want)
		}
	}
}

func TestReadFloatAsPostgreSQL(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		in   string
		bits int
		want float64 // NaN for NaN
		code pgerror.Code
	}{
		{"0.1", 64, 0.1, ""}, {" 1e-320 ", 64, 1e-320, ""}, {"5.e1", 64, 50, ""}, {"-0", 64, math.Copysign(0, -1), ""},
		{"0x10", 64, 16, ""}, {"0X.8P1", 64, 1, ""}, {"-0X1.", 64, -1, ""}, {"0x1p-1074", 64, 5e-324, ""},
		{"2.4703282292062328e-324", 64, 5e-324, ""}, {"4e-324", 64, 5e-324, ""}, {"0e-400", 64, 0, ""},
		{"1.7976931348623158e308", 64, math.MaxFloat64, ""},
		{"NaN", 64, nan, ""}, {"-nan", 64, nan, ""}, {"nan()", 64, nan, ""}, {"nan(a_b9)", 64, nan, ""},
		{"infinIty", 64, math.Inf(1), ""}, {"  inf", 64, math.Inf(1), ""}, {"-INF", 64, math.Inf(-1), ""},
		{"1e-400", 64, 0, pgerror.NumericValueOutOfRange}, {"1e400", 64, 0, pgerror.NumericValueOutOfRange},
		{"2.4703282292062327e-324", 64, 0, pgerror.NumericValueOutOfRange}, {"0x1p-1075", 64, 0, pgerror.NumericValueOutOfRange},
		{"1.7976931348623159e308", 64, 0, pgerror.NumericValueOutOfRange},
		{"1e-1000000000000", 64, 0, pgerror.NumericValueOutOfRange},
		{"nan(a-b)", 64, 0, pgerror.InvalidTextRepresentation}, {"infin", 64, 0, pgerror.InvalidTextRepresentation},
		{"infinityx", 64, 0, pgerror.InvalidTextRepresentation}, {"1e", 64, 0, pgerror.InvalidTextRepresentation},
		{"1e+", 64, 0, pgerror.InvalidTextRepresentation}, {".e1", 64, 0, pgerror.InvalidTextRepresentation},
		{"0x", 64, 0, pgerror.InvalidTextRepresentation}, {"0x.p1", 64, 0, pgerror.InvalidTextRepresentation},
		{"1_0", 64, 0, pgerror.InvalidTextRepresentation}, {"1e 5", 64, 0, pgerror.InvalidTextRepresentation},
		{" ", 64, 0, pgerror.InvalidTextRepresentation}, {"\u00a01", 64, 0, pgerror.InvalidTextRepresentation},
		{"+-1", 64, 0, pgerror.InvalidTextRepresentation},
		{"0.1", 32, float64(float32(0.1)), ""}, {"16777217", 32, 16777216, ""}, {"1e-45", 32, math.SmallestNonzeroFloat32, ""},
		{"7.1e-46", 32, math.SmallestNonzeroFloat32, ""}, {"3.4028235e38", 32, math.MaxFloat32, ""},
		{"3.4028236e38", 32, 0, pgerror.NumericValueOutOfRange}, {"1e-46", 32, 0, pgerror.NumericValueOutOfRange},
		{"0x1p-150", 32, 0, pgerror.NumericValueOutOfRange}, {"1e39", 32, 0, pgerror.NumericValueOutOfRange},
	}
	for _, tc := range tests {
		got, err := readFloat(tc.in, tc.bits, subject{col: "age"})
		if code := pgerror.SQLState(err); code != tc.code {
			t.Errorf("float%d %q: SQLSTATE %q, PostgreSQL %q", tc.bits/8, tc.in, code, tc.code)
			continue
		}
		same := got == tc.want && math.Signbit(got) == math.Signbit(tc.want) || math.IsNaN(got) && math.IsNaN(tc.want)
		if err == nil && !same {
			t.Errorf("float%d %q: %v, PostgreSQL %v", tc.bits/8, tc.in, got, tc.want)
		}
	}
}

func TestReadIntegerAsPostgreSQL(t *testing.T) {
	tests := []struct {
		in   string
		bits int
		want int64
		code pgerror.Code
	}{
		{" +5 ", 64, 5, ""}, {"-0", 64, 0, ""}, {"007", 64, 7, ""}, {"\t-9223372036854775808\n", 64, math.MinInt64, ""},
		{"9223372036854775808", 64, 0, pgerror.NumericValueOutOfRange}, {"-32768", 16, -32768, ""},
		{"32768", 16, 0, pgerror.NumericValueOutOfRange}, {"2147483648", 32, 0, pgerror.NumericValueOutOfRange},
		{"1.0", 16, 0, pgerror.InvalidTextRepresentation}, {"+-5", 64, 0, pgerror.InvalidTextRepresentation},
		{"0x10", 64, 0, pgerror.InvalidTextRepresentation}, {"1_000", 64, 0, pgerror.InvalidTextRepresentation},
		{"", 64, 0, pgerror.InvalidTextRepresentation}, {"1e3", 64, 0, pgerror.InvalidTextRepresentation},
		{"\u00a01", 64, 0, pgerror.InvalidTextRepresentation}, {"٣", 64, 0, pgerror.InvalidTextRepresentation},
	}
	for _, tc := range tests {
		got, err := readInteger(tc.in, tc.bits, subject{col: "age"})
		if code := pgerror.SQLState(err); code != tc.code || got != tc.want {
			t.Errorf("int%d %q: %d (SQLSTATE %q), PostgreSQL %d (%q)", tc.bits/8, tc.in, got, code, tc.want, tc.code)
		}
	}
}

// TestTextConversions: character drops its padding, name keeps 63 bytes
// (a character whole), "char" one byte or its octal escape.
func TestTextConversions(t *testing.T) {
	if got := trimBlanks("ab  "); got != "ab" {
		t.Errorf("character 'ab  ' as text: %q", got)
	}
	if got := trimBlanks("ab\t "); got != "ab\t" {
		t.Errorf("character 'ab\\t ' as text: %q (only spaces pad)", got)
	}
	long := ""
	for range 40 {
		long += "é"
	}
	if got := clipName(long); len(got) != 62 {
		t.Errorf("name of 40 é (80 bytes): %d bytes, want 62 (31 é)", len(got))
	}
	for in, want := range map[string]string{"abc": "a", "": "", `\101`: "A", `\10`: `\`, "a\\101": "a"} {
		if got, err := readChar(in, subject{col: "age"}); err != nil || got != want {
			t.Errorf(`"char" %q: %q %v, want %q`, in, got, err, want)
		}
	}
	for _, in := range []string{"é", `\351`} {
		if _, err := readChar(in, subject{col: "age"}); pgerror.SQLState(err) != pgerror.FeatureNotSupported {
			t.Errorf(`"char" %q: %v, want 0A000 (not UTF-8 as text)`, in, err)
		}
	}
}

// TestIntegerColumnAgainstNonIntegers: what `age op v` becomes for a
// value that is not an integer, as PostgreSQL compares it.
func TestIntegerColumnAgainstNonIntegers(t *testing.T) {
	cmp := func(op string, n int64) ir.Pred { return &ir.Compare{Column: "age", Op: op, Value: exactInt(n)} }
	float := func(f float64) edges { return floatEdges(f) }
	num := func(s string) edges {
		n, err := readNumeric(s, subject{})
		if err != nil {
			t.Fatal(err)
		}
		return numericEdges(n)
	}
	tests := []struct {
		name string
		op   string
		e    edges
		want ir.Pred
	}{
		{"an exact integer keeps its operator", "<", num("30.0"), cmp("<", 30)},
		{"a fraction bounds from above", ">", num("29.5"), cmp(">=", 30)},
		{"a fraction bounds from below", "<=", num("-0.5"), cmp("<=", -1)},
		{"no integer equals a fraction", "=", num("30.5"), falseUnlessNull("age", ir.TypeInt)},
		{"every integer differs from a fraction", "<>", num("30.5"), trueUnlessNull("age", ir.TypeInt)},
		{"numeric NaN is above every integer", "<", num("NaN"), trueUnlessNull("age", ir.TypeInt)},
		{"-Infinity is below every integer", ">=", num("-Infinity"), trueUnlessNull("age", ir.TypeInt)},
		{"a numeric past int64", "<", num("9223372036854775808"), trueUnlessNull("age", ir.TypeInt)},
		{"two integers convert to 2^53", "=", float(9007199254740992),
			&ir.Between{Column: "age", Lo: exactInt(9007199254740992), Hi: exactInt(9007199254740993)}},
		{"2^63 as a double is the top 512 integers", ">=", float(math.Exp2(63)), cmp(">=", math.MaxInt64-511)},
		{"a double NaN is above every integer", ">", float(math.NaN()), falseUnlessNull("age", ir.TypeInt)},
		{"-2^63 as a double is the bottom 513 integers", "=", float(-math.Exp2(63)), cmp("<=", math.MinInt64+512)},
		{"a double fraction", "<", float(0.1), cmp("<=", 0)},
	}
	for _, tc := range tests {
		if got := integerCompare("age", tc.op, tc.e); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: age %s v is %#v, want %#v", tc.name, tc.op, got, tc.want)
		}
	}
}

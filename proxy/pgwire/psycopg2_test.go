package pgwire

import (
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// psycopg2Script connects as a Python analyst does and prints one line per
// step: the refusal of standard_conforming_strings = off, and the answers
// to statements psycopg2 builds by pasting parameters into the text (its
// only way), with a value that would inject SQL if the quote in it were
// escaped with a backslash.
const psycopg2Script = `
import sys, psycopg2
host, port, user, password = sys.argv[1:5]
conn = psycopg2.connect(host=host, port=port, user=user, password=password, dbname="countwall")
conn.autocommit = True
cur = conn.cursor()
try:
    cur.execute("SET standard_conforming_strings = off")
    print("set: accepted")
except psycopg2.Error as e:
    print("set:", e.pgcode)
cur.execute("SHOW standard_conforming_strings")
print("show:", cur.fetchone()[0])
for v in ["x' OR age >= 0 --", "x\\' OR age >= 0 --", "F\\"]:
    cur.execute("SELECT COUNT(*) FROM survey WHERE suburb = %s", (v,))
    print("count:", cur.fetchone()[0])
cur.execute("SELECT COUNT(*) FROM survey WHERE sex = %s", ("F",))
print("count:", cur.fetchone()[0])
`

// TestPsycopg2CannotBeToldStringsAreNonStandard: psycopg2 interpolates
// parameters client-side, escaping quotes as the server's
// standard_conforming_strings says. The setting cannot be turned off (0A000),
// so the interpolated values are read exactly as psycopg2 meant them: none of
// the three hostile values matches a row, and an ordinary one counts its
// rows. The test needs /usr/bin/python3 with psycopg2 (Debian's
// python3-psycopg2), which .ci/run installs.
func TestPsycopg2CannotBeToldStringsAreNonStandard(t *testing.T) {
	needPsycopg2(t)
	ts := startLexServer(t)
	host, port, err := net.SplitHostPort(ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/usr/bin/python3", "-c", psycopg2Script, host, port, testAnalyst, testPassword).CombinedOutput()
	if err != nil {
		t.Fatalf("psycopg2: %v\n%s", err, out)
	}
	fCount := 0
	for _, r := range lexRows {
		if r.sex == "F" {
			fCount++
		}
	}
	want := strings.Join([]string{"set: 0A000", "show: on", "count: 0", "count: 0", "count: " + countSuburb(`F\`), "count: " + strconv.Itoa(fCount)}, "\n") + "\n"
	if string(out) != want {
		t.Fatalf("psycopg2 printed\n%s\nwant\n%s", out, want)
	}
}

func countSuburb(s string) string {
	n := 0
	for _, r := range lexRows {
		if r.suburb == s {
			n++
		}
	}
	return strconv.Itoa(n)
}

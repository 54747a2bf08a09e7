package pgwire

import (
	"encoding/csv"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"countwall/dataset"
)

// The client matrix: every mainstream client an analyst uses connects
// (SCRAM), discovers the schema its own way, counts with parameters of
// several types, reads a grouped answer through a cursor in chunks, copies
// a GROUP BY out and reports a refused statement with its SQLSTATE and
// message. Each client prints the same report (see matrixWant), and the
// report is compared, exactly, with what the table holds.
//
// A client that is not installed is skipped with the reason, except under
// CI=true, where .ci/run installs every one of them.

// visit is a row of the matrix's table "visits": an integer, a text and a
// floating-point column, the last sometimes NULL.
type visit struct {
	id, age int
	sex     string
	score   float64
	noScore bool
}

var matrixVisits = func() []visit {
	r := rand.New(rand.NewSource(34))
	rows := make([]visit, 400)
	for i := range rows {
		rows[i] = visit{id: i + 1, age: 20 + r.Intn(20), sex: []string{"F", "M"}[r.Intn(2)], score: float64(r.Intn(20)) / 4, noScore: r.Intn(10) == 0}
	}
	return rows
}()

// The statements every client sends, with its own placeholders: count
// binds an int, a text and a float; null binds a NULL, which counts no
// row (a comparison with NULL is never true), as in PostgreSQL; cursor is
// read matrixChunk rows at a time, its values as the driver types them;
// copy is copied out as CSV with a header.
const (
	matrixCount   = "SELECT COUNT(*) FROM visits WHERE age > $1 AND sex = $2 AND score > $3"
	matrixNull    = "SELECT COUNT(*) FROM visits WHERE sex = $1"
	matrixCursor  = "SELECT age, COUNT(*) FROM visits GROUP BY age ORDER BY age"
	matrixCopy    = "SELECT sex, COUNT(*) FROM visits GROUP BY sex ORDER BY sex"
	matrixRefused = "SELECT score FROM visits"
	matrixChunk   = 6
)

// The parameters bound to matrixCount; the programs in testdata/clients
// spell out the same statements and values.
const (
	matrixAge   = 25
	matrixSex   = "F"
	matrixScore = 2.5
)

// startMatrixServer loads matrixVisits through `countwall load`'s code
// into a fresh database and serves it with the exact mechanism.
func startMatrixServer(t *testing.T) *testServer {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"id", "age", "sex", "score"}) //nolint:errcheck // checked by w.Error below
	for _, v := range matrixVisits {
		score := strconv.FormatFloat(v.score, 'f', 2, 64)
		if v.noScore {
			score = ""
		}
		w.Write([]string{strconv.Itoa(v.id), strconv.Itoa(v.age), v.sex, score}) //nolint:errcheck // checked by w.Error below
	}
	w.Flush()
	csvPath, dbPath := filepath.Join(dir, "visits.csv"), filepath.Join(dir, "visits.db")
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.LoadCSV(t.Context(), dataset.LoadOptions{CSVPath: csvPath, DBPath: dbPath, Table: "visits", Unit: "id"}); err != nil {
		t.Fatal(err)
	}
	verifier, err := NewVerifier(testPassword, 4096)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`database: %s
state: %s
mechanism:
  name: exact
analysts:
  %s:
    password: %q
tables:
  visits:
    privacy_unit: id
    domains:
      sex: [F, M]
      age: {min: 20, max: 39}
`, dbPath, filepath.Join(dir, "state.db"), testAnalyst, verifier)
	return serveConfigForTest(t, dir, body)
}

// driverTypes is how a driver names the columns' types: bigint, text and
// double precision.
type driverTypes [3]string

var pgTypeNames = driverTypes{"bigint", "text", "double precision"}

// matrixWant is the report a client prints, computed from matrixVisits.
// values is how the driver types the cursor's first row, age and count,
// both bigint in PostgreSQL; noCopy, when set, is why the client copies
// nothing out.
func matrixWant(types driverTypes, values, noCopy string) string {
	count, ages, sexes := 0, map[int]int{}, map[string]int{}
	for _, v := range matrixVisits {
		if v.age > matrixAge && v.sex == matrixSex && !v.noScore && v.score > matrixScore {
			count++
		}
		ages[v.age]++
		sexes[v.sex]++
	}
	var rows, chunks []string
	for age := 20; age <= 39; age++ {
		rows = append(rows, fmt.Sprintf("%d=%d", age, ages[age]))
	}
	for left := len(rows); left > 0; left -= matrixChunk {
		chunks = append(chunks, strconv.Itoa(min(left, matrixChunk)))
	}
	copied := fmt.Sprintf("sex,count|F,%d|M,%d", sexes["F"], sexes["M"])
	if noCopy != "" {
		copied = "skipped"
	}
	return strings.Join([]string{
		fmt.Sprintf("schema: visits id:%s age:%[1]s sex:%s score:%s", types[0], types[1], types[2]),
		"count: " + strconv.Itoa(count),
		"null: 0",
		"chunks: " + strings.Join(chunks, " "),
		"rows: " + strings.Join(rows, " "),
		"types: " + values,
		"copy: " + copied,
		"refused: 0A000 a query must select COUNT(*); bare columns are not answered",
	}, "\n") + "\n"
}

// matrixClient is a row of the matrix.
type matrixClient struct {
	name  string
	types driverTypes
	// values is how the driver types PostgreSQL's bigint, as it types the
	// cursor's age and count when it reads them from PostgreSQL (each was
	// run against PostgreSQL 15 to find it): a group column has its
	// column's type, as PostgreSQL's does.
	values string
	noCopy string // why the client copies nothing out, if it does not
	// pending names the report's lines (by their key, such as "chunks")
	// that wait for a server change, with the issue item: those lines are
	// skipped, the others compared.
	pending map[string]string
	// run returns the client's report; it skips the test where the client
	// is not installed.
	run func(t *testing.T, ts *testServer) string
}

func TestClientMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: starts every client: skipped under -short; go test ./... runs it")
	}
	ts := startMatrixServer(t)
	clients := append(goClients(), scriptClients()...)
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			got, want := c.run(t, ts), matrixWant(c.types, c.values, c.noCopy)
			for key, reason := range c.pending {
				got, want = dropLine(got, key), dropLine(want, key)
				t.Run(key, func(t *testing.T) { t.Skip(reason) })
			}
			if got != want {
				t.Errorf("%s printed\n%s\nwant\n%s", c.name, got, want)
			}
		})
	}
}

// dropLine removes the report's line with the key.
func dropLine(report, key string) string {
	var kept []string
	for _, line := range strings.SplitAfter(report, "\n") {
		if !strings.HasPrefix(line, key+":") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}

// needClient skips the test, or fails it under CI, where a client is not
// installed.
func needClient(t *testing.T, err error, what, install string) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is missing in CI (%v): .ci/run installs it with %s", what, err, install)
	}
	t.Skipf("%s is not installed (%v): %s", what, err, install)
}

// runClient runs a client's program and returns what it printed.
func runClient(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd.Args[0], err, out)
	}
	return string(out)
}

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var binary string

// TestMain builds the countwall binary once, so that the commands are tested
// the way a user runs them.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "countwall-cmd-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "countwall")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("building countwall: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs countwall with stdin and returns stdout+stderr and the error.
func run(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "CI=true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func TestCommands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "demo.db")
	cfgPath := filepath.Join(dir, "countwall.yaml")
	example, err := os.ReadFile("examples/countwall.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, example, 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		stdin   string
		args    []string
		want    []string
		wantErr bool
	}{
		{"gen", "", []string{"gen", "people", "--rows", "3000", "--out", db}, []string{"3,000 rows"}, false},
		{"gen refuses to overwrite", "", []string{"gen", "people", "--rows", "10", "--out", db}, []string{"exists"}, true},
		{"query", "", []string{"query", "--config", cfgPath, "--mechanism.name", "exact", "SELECT COUNT(*) FROM people"}, []string{"count", "3000", "(1 rows)"}, false},
		{"query group by", "", []string{"query", "--config", cfgPath, "--mechanism.name", "exact", "SELECT sex, COUNT(*) FROM people GROUP BY sex"}, []string{" F ", " M ", "(2 rows)"}, false},
		{"query refusal", "", []string{"query", "--config", cfgPath, "SELECT * FROM people"}, []string{"ERROR 0A000"}, true},
		{"laplace charges", "", []string{"query", "--config", cfgPath, "--mechanism.name", "laplace", "--analyst", "alice", "SELECT COUNT(*) FROM people"}, []string{"NOTICE: charged epsilon 0.1 (dp)"}, false},
		{"budget list", "", []string{"budget", "list", "--config", cfgPath}, []string{"alice", "dp", "0.1"}, false},
		{"budget grant", "", []string{"budget", "grant", "alice", "--kind", "dp", "--epsilon", "0.5", "--config", cfgPath}, nil, false},
		{"budget reset needs confirmation", "", []string{"budget", "reset", "alice", "--config", cfgPath}, []string{"--yes"}, true},
		{"budget reset", "", []string{"budget", "reset", "alice", "--yes", "--config", cfgPath}, nil, false},
		{"passwd", "hunter2\n", []string{"passwd"}, []string{"SCRAM-SHA-256$4096:"}, false},
		{"passwd empty", "\n", []string{"passwd"}, []string{"empty"}, true},
		{"load malformed", "", []string{"load", "--csv", writeFile(t, dir, "bad.csv", "id,age\n1,30\n2,40,extra\n"), "--db", filepath.Join(dir, "loaded.db"), "--table", "t", "--unit", "id"}, []string{"line 3"}, true},
		{"load", "", []string{"load", "--csv", writeFile(t, dir, "good.csv", "id,age,city\n1,30,Perth\n2,41,Hobart\n"), "--db", filepath.Join(dir, "loaded.db"), "--table", "t", "--unit", "id"}, []string{"privacy_unit: id", "columns: [id, age, city]"}, false},
	}
	for _, st := range steps {
		out, err := run(t, st.stdin, st.args...)
		if (err != nil) != st.wantErr {
			t.Errorf("%s: err = %v, output:\n%s", st.name, err, out)
		}
		for _, w := range st.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", st.name, w, out)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "loaded.db")); err != nil {
		t.Errorf("the good CSV was not loaded: %v", err)
	}
}

func TestDemo(t *testing.T) {
	out, err := run(t, "", "demo", "--rows", "3000")
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, w := range []string{"exact", "cellkey", "laplace", "idp", "Q5"} {
		if !strings.Contains(out, w) {
			t.Errorf("demo output lacks %q:\n%s", w, out)
		}
	}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

package pgwire

import (
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// pgcliDriver runs pgcli in a pseudo-terminal (Python's pty module), with a
// fresh home and config (no pager, no colours, no confirmation prompts),
// types each input line after the previous prompt came back, and prints the
// whole screen output. A tab in a line asks for a completion: it is typed,
// the completion menu given time to open from the completion refresh, and
// the choice taken before the line is sent.
const pgcliDriver = `
import os, pty, sys, time, select, shutil, tempfile
pgcli, host, port, user, db = sys.argv[1:6]
inputs = sys.argv[6:]
home = tempfile.mkdtemp()
conf = os.path.join(home, "config", "pgcli")
os.makedirs(conf)
with open(os.path.join(conf, "config"), "w") as f:
    f.write("[main]\nenable_pager = False\nsyntax_style = bw\ndestructive_warning = False\n"
            "log_file = %s\nhistory_file = %s\n" % (os.path.join(home, "log"), os.path.join(home, "history")))
env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, "config"), TERM="xterm",
           PAGER="cat", COLUMNS="120", LINES="60", PROMPT_TOOLKIT_NO_CPR="1")
pid, fd = pty.fork()
if pid == 0:
    os.execve(pgcli, [pgcli, "--less-chatty", "-h", host, "-p", port, "-U", user, "-d", db], env)
out = b""
prompt = (user + "@").encode()
def read_for(seconds, prompts=None):
    global out
    end = time.time() + seconds
    while time.time() < end and (prompts is None or out.count(prompt) < prompts):
        r, _, _ = select.select([fd], [], [], 0.1)
        if not r:
            continue
        try:
            d = os.read(fd, 65536)
        except OSError:
            return
        if not d:
            return
        out += d
read_for(30, 1)
read_for(1.5)  # the completion refresh runs in the background after the prompt
for line in inputs:
    if "\t" in line:
        before, line = line.split("\t", 1)
        os.write(fd, before.encode()); read_for(0.5)
        os.write(fd, b"\t"); read_for(1)
        os.write(fd, b"\r"); read_for(0.3)  # Enter takes the completion, closing the menu
    os.write(fd, line.encode() + b"\r")
    read_for(30, out.count(prompt) + 1)
os.write(fd, b"\x04")
read_for(10)
if os.waitpid(pid, os.WNOHANG) == (0, 0):
    os.kill(pid, 9)
    os.waitpid(pid, 0)
shutil.rmtree(home)
sys.stdout.write(out.decode(errors="replace"))
`

// terminalControls are the escape sequences of a terminal's output: CSI
// (colours, cursor moves), OSC (titles), and the two-byte ones.
var terminalControls = regexp.MustCompile(`\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]`)

// TestPgcli drives pgcli 3.5 (Debian's pgcli; .ci/run installs it) as an
// analyst does: its completion refresh reads the catalog in the background
// and completes a table name, \dt and \d people list what the config makes
// public, a COUNT is answered and a refused statement says why.
func TestPgcli(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: drives pgcli in a pseudo-terminal: skipped under -short; go test ./... runs it")
	}
	pgcli, err := exec.LookPath("pgcli")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pgcli is not installed; .ci/run installs it (apt-get install pgcli)")
		}
		t.Skip("pgcli is not installed (apt-get install pgcli)")
	}
	ts := startServer(t, "exact", nil, nil)
	host, port, _ := net.SplitHostPort(ts.addr)
	cmd := exec.Command("/usr/bin/python3", "-c", pgcliDriver, pgcli, host, port, testAnalyst, "countwall",
		"select count(*) from peo\t", `\dt`, `\d people`, "SELECT age FROM people")
	cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword, "PGCONNECT_TIMEOUT=5")
	raw, err := cmd.CombinedOutput()
	screen := strings.ReplaceAll(terminalControls.ReplaceAllString(string(raw), ""), "\r", "")
	if err != nil {
		t.Fatalf("pgcli driver: %v\n%s", err, screen)
	}
	for _, want := range []string{
		"select count(*) from people\n", // completed from the catalog
		"| count |\n|-------|\n| 5000  |\n",
		"| Schema | Name   | Type  | Owner     |\n|--------+--------+-------+-----------|\n| public | people | table | countwall |\n",
		"| Column     | Type   | Modifiers |\n|------------+--------+-----------|\n| id         | bigint |           |\n| age        | bigint |           |\n| sex        | text   |           |\n",
		"a query must select COUNT(*); bare columns are not answered\n",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("pgcli's screen lacks\n%s\nscreen:\n%s", want, screen)
		}
	}
	for _, bad := range []string{"Traceback", "Exception", "not supported"} {
		if strings.Contains(screen, bad) {
			t.Errorf("pgcli's screen shows %q:\n%s", bad, screen)
		}
	}
}

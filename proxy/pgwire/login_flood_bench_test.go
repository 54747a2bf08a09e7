package pgwire

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"testing"
	"time"
)

// floodScript holds N sockets open to the firewall from another process
// (each end of a loopback socket is a file descriptor, and one process may
// not hold both ends of 20,000). In "idle" mode each socket connects and
// never sends a byte; in "reconnecting" mode a socket the server closes
// connects again at once. It prints "ready" once every socket has
// connected once and stops when its stdin closes.
const floodScript = `
import selectors, socket, sys, threading
host, port, n, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sel = selectors.DefaultSelector()
def dial():
    s = socket.socket(); s.setblocking(False)
    try: s.connect_ex((host, port))
    except OSError: pass
    sel.register(s, selectors.EVENT_READ)
for _ in range(n): dial()
print("ready", flush=True)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
while not stop.is_set():
    for key, _ in sel.select(timeout=0.2):
        s = key.fileobj
        try: data = s.recv(1)
        except OSError: data = b""
        if not data:
            sel.unregister(s); s.close()
            if mode == "reconnecting": dial()
`

// BenchmarkLoginUnderSilentSockets measures the claim of docs/operator.md about
// logins under many silent sockets, as the issue measured it: 17 psql
// logins, one after another, with 19,000 idle sockets (the process's file
// limit is 20,000) and with 2,000 sockets that reconnect as soon as they
// are closed. It reports the logins that failed and the slowest login:
//
//	go test ./proxy/pgwire -run '^$' -bench LoginUnderSilentSockets -benchtime 1x
func BenchmarkLoginUnderSilentSockets(b *testing.B) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		b.Skip("needs /usr/bin/python3 to hold the sockets")
	}
	for _, tc := range []struct {
		mode    string
		sockets int
	}{{"idle", 19000}, {"reconnecting", 2000}} {
		b.Run(tc.mode, func(b *testing.B) {
			ts := startServer(b, "exact", nil, nil)
			for b.Loop() {
				failed, slowest, median := floodLogins(b, ts, tc.mode, tc.sockets)
				b.ReportMetric(float64(failed), "failed/17")
				b.ReportMetric(slowest.Seconds(), "slowest-s")
				b.ReportMetric(median.Seconds(), "median-s")
			}
		})
	}
}

func floodLogins(b *testing.B, ts *testServer, mode string, sockets int) (failed int, slowest, median time.Duration) {
	host, port, _ := net.SplitHostPort(ts.addr)
	flood := exec.Command("/usr/bin/python3", "-c", floodScript, host, port, strconv.Itoa(sockets), mode)
	stdin, err := flood.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := flood.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := flood.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); flood.Wait() }() //nolint:errcheck // the flood ends when its stdin closes
	// The logins start while the sockets are still being opened, as in the
	// issue, and go on once they all are.
	ready := make(chan struct{})
	go func() {
		bufio.NewReader(stdout).ReadString('\n') //nolint:errcheck // EOF also means the flood is done opening
		close(ready)
	}()
	var took []time.Duration
	for i := 0; i < 17; i++ {
		if i == 8 {
			<-ready
		}
		start := time.Now()
		cmd := exec.Command("psql", "-X", "-h", host, "-p", port, "-U", testAnalyst, "-d", "countwall", "-c", "SELECT COUNT(*) FROM people")
		cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword, "PGCONNECT_TIMEOUT=30")
		if out, err := cmd.CombinedOutput(); err != nil {
			failed++
			b.Logf("login %d failed: %v %s", i+1, err, out)
		}
		took = append(took, time.Since(start))
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	return failed, took[len(took)-1], took[len(took)/2]
}

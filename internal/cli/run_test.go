package cli

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// run runs the countwall command line in process with stdin and args, as
// main does, and returns what it wrote (standard output and error) and its
// error.
func run(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := execute(t.Context(), &out, stdin, args...)
	return out.String(), err
}

// execute runs a command tree of its own on args, writing to w.
func execute(ctx context.Context, w *bytes.Buffer, stdin string, args ...string) error {
	root := New()
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(w)
	root.SetErr(w)
	return root.ExecuteContext(ctx)
}

// lockedBuffer is a buffer a running command writes while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServe runs `countwall serve` with args in process, its output in
// logs, until stop cancels its context and waits for it to end.
func startServe(t *testing.T, args ...string) (logs *lockedBuffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs = &lockedBuffer{}
	root := New()
	root.SetArgs(append([]string{"serve"}, args...))
	root.SetOut(logs)
	root.SetErr(logs)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	return logs, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, logs.String())
		}
	}
}

// freePort finds a loopback port for the server to listen on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// writeFile writes body to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

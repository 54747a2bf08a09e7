package progress

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// A progress line says the queries sent and their rate, the steps done and
// the time left at the rate so far; before any step it says the time spent.
func TestLines(t *testing.T) {
	start := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	now, sent := start, 0
	var b bytes.Buffer
	l := NewLines(&b, "idp-reconstruct", func() int { return sent }, func() time.Time { return now })
	tests := []struct {
		after       time.Duration
		sent        int
		done, total int
		stage       string
		want        string
	}{
		{10 * time.Second, 4100, 0, 0, "", "idp-reconstruct: 4,100 queries (410/s), 10s elapsed\n"},
		{20 * time.Second, 8200, 0, 9, "", "idp-reconstruct: 8,200 queries (410/s), 0 of 9 steps done, 20s elapsed\n"},
		{30 * time.Second, 12300, 3, 9, "", "idp-reconstruct: 12,300 queries (410/s), 3 of 9 steps done (33%), about 1m0s left\n"},
		{30 * time.Second, 12300, 3, 9, "column 3 of 10 (age)",
			"idp-reconstruct: 12,300 queries (410/s), column 3 of 10 (age), 3 of 9 steps done (33%), about 1m0s left\n"},
	}
	for _, tt := range tests {
		now, sent = start.Add(tt.after), tt.sent
		l.Update(tt.done, tt.total)
		l.Stage(tt.stage)
		b.Reset()
		l.Write()
		if b.String() != tt.want {
			t.Errorf("after %s: %q, want %q", tt.after, b.String(), tt.want)
		}
	}
}

// Inside go test, away from a terminal, an attack shows nothing: the
// update is nil and stop is safe to call.
func TestAttackQuietInTests(t *testing.T) {
	var b bytes.Buffer
	update, stage, stop := Attack(&b, "attacking", func() int { return 1 })
	stop()
	if update != nil || stage != nil || b.Len() != 0 {
		t.Errorf("update %v, wrote %q", update != nil, b.String())
	}
}

// lockedBuffer is a buffer the line writer and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

// Start writes lines until stop, which waits for the writer to end: no
// line follows it.
func TestLinesStartStop(t *testing.T) {
	var b lockedBuffer
	l := NewLines(&b, "x", nil, time.Now)
	stop := l.Start(time.Millisecond)
	for b.Len() == 0 {
		time.Sleep(time.Millisecond)
	}
	stop()
	n := b.Len()
	time.Sleep(5 * time.Millisecond)
	if b.Len() != n {
		t.Error("a line was written after stop")
	}
}

package pgwire

import (
	"net"
	"testing"
	"time"
)

// tcpPair returns the server side of a loopback connection and its client.
func tcpPair(t *testing.T, l net.Listener) (server, client net.Conn) {
	t.Helper()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return server, client
}

// A connection whose client has sent a startup packet that the server has
// not read yet (its goroutine has not run) is started, not silent: when the
// silent class is full it is moved to the started ones, and the next
// silent connection is evicted instead.
func TestUnreadStartupIsNotEvictedAsSilent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := newPendingLogins()
	sent, client := tcpPair(t, l)
	if _, err := client.Write(startupBytes(testAnalyst)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(hangGuard)
	for !hasSentStartup(sent) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // the bytes cross loopback
	}
	p.add(sent, 1)
	var silent []net.Conn
	var evicted []net.Conn
	for i := 0; i <= silentFactor; i++ {
		s, _ := tcpPair(t, l)
		silent = append(silent, s)
		evicted = p.add(s, 1)
		if i < silentFactor && len(evicted) != 0 {
			t.Fatalf("arrival %d evicted %d connections", i+1, len(evicted))
		}
	}
	// Arrival 32 found the class full and moved the oldest (sent) to the
	// started ones, which made room; arrival 33 evicted the oldest silent.
	if len(evicted) != 1 || evicted[0] != silent[0] {
		t.Errorf("the last arrival evicted %d connections, want the oldest silent one", len(evicted))
	}
	if p.started.Len() != 1 || p.started.Front().Value.(net.Conn) != sent {
		t.Errorf("the connection with an unread startup is not among the started ones")
	}
	if _, pending := p.at[silent[0]]; pending {
		t.Errorf("the oldest silent connection is still pending")
	}
	if p.silent.Len() != silentFactor || p.len() != silentFactor+1 {
		t.Errorf("%d silent, %d pending; want %d and %d", p.silent.Len(), p.len(), silentFactor, silentFactor+1)
	}
}

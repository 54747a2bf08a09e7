//go:build unix

package pgwire

import (
	"net"
	"syscall"
)

// minStartupBytes is a startup packet's length word and code: a complete
// SSLRequest, or the start of a StartupMessage.
const minStartupBytes = 8

// hasSentStartup reports, without consuming anything, whether a client has
// already sent the first 8 bytes of a startup packet that the server has not
// read yet: its connection is a login under way, however long the server
// takes to get to it.
func hasSentStartup(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var buf [minStartupBytes]byte
	n := 0
	// Control, not Read: the connection's goroutine may be blocked reading
	// this socket, and Read would wait for it. The peek neither blocks
	// (MSG_DONTWAIT) nor consumes (MSG_PEEK).
	raw.Control(func(fd uintptr) { //nolint:errcheck // a failed peek reads as nothing sent
		n, _, _ = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	return n >= minStartupBytes
}

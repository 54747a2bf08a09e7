//go:build !unix

package pgwire

import "net"

// hasSentStartup cannot peek at a socket on this platform: every
// connection whose first packet the server has not read yet is taken as
// silent.
func hasSentStartup(net.Conn) bool { return false }

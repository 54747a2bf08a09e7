package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
)

// listenUnix listens on the Unix socket PostgreSQL's clients look for in
// dir for the port of tcp: psql -h DIR -p PORT, and libpq, pgx or psycopg2
// given host=DIR, connect to DIR/.s.PGSQL.PORT. The socket takes the
// process's umask, so that with the usual 022 only the user running serve
// (and root) may connect through it. Closing the listener removes the file.
func listenUnix(dir string, tcp net.Addr) (net.Listener, error) {
	_, port, err := net.SplitHostPort(tcp.String())
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ".s.PGSQL."+port)
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	return net.Listen("unix", path)
}

// removeStaleSocket removes the socket a server that ended without closing
// it (a crash) left at path, as PostgreSQL does at start. It removes nothing
// that is not a socket, nor a socket some server still accepts on.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return fmt.Errorf("another server is listening on %s", path)
	}
	return os.Remove(path)
}

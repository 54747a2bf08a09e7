package pgwire

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"countwall/pgtypes"
	"countwall/proxy"
)

// echoSession answers every statement with one row and never touches data,
// so the fuzzer exercises only message handling.
type echoSession struct{}

func (echoSession) Prepare(sql string) *proxy.Statement {
	st := &proxy.Statement{SQL: sql}
	switch {
	case strings.EqualFold(sql, "COMMIT"):
		st.Transaction = proxy.TxCommit
	case strings.EqualFold(sql, "ROLLBACK"):
		st.Transaction = proxy.TxRollback
	}
	return st
}

func (echoSession) Execute(_ context.Context, st *proxy.Statement, args []*string) (*proxy.Result, error) {
	if st.SQL == "" {
		return &proxy.Result{}, nil
	}
	return &proxy.Result{Columns: []proxy.Column{{Name: "count", Type: proxy.ColumnInt8}},
		Rows: [][]proxy.Value{{{Int: int64(len(args))}}}, Suppressed: []bool{false}, Tag: "SELECT 1", Notice: "charged nothing"}, nil
}

func (echoSession) Describe(context.Context, *proxy.Statement) (*proxy.Description, error) {
	return &proxy.Description{Params: []pgtypes.OID{pgtypes.Int8}, Columns: []proxy.Column{{Name: "count", Type: proxy.ColumnInt8}}}, nil
}

func (echoSession) Refused(*proxy.Statement, error) {}

func (echoSession) Settings() proxy.Settings             { return proxy.Settings{} }
func (echoSession) RestoreSettings(proxy.Settings)       {}
func (echoSession) Setting(string) (string, bool)        { return "", false }
func (echoSession) UseStartupSettings(map[string]string) {}

func (echoSession) Done() <-chan struct{} { return nil }

func (echoSession) Close() {}

func startupBytes(user string) []byte {
	body := binary.BigEndian.AppendUint32(nil, 196608)
	body = append(body, "user\x00"+user+"\x00\x00"...)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body)+4)), body...)
}

func message(typ byte, body string) []byte {
	out := []byte{typ}
	out = binary.BigEndian.AppendUint32(out, uint32(len(body)+4))
	return append(out, body...)
}

// FuzzServerMessages feeds arbitrary bytes to a connection after a valid
// startup (trust authentication) and, separately, as the startup itself. The
// server must neither panic nor hang: it returns within the deadline.
func FuzzServerMessages(f *testing.F) {
	f.Add([]byte{}, true)
	f.Add(message('Q', "SELECT COUNT(*) FROM people\x00"), true)
	f.Add(append(message('P', "s\x00SELECT $1\x00\x00\x00"), message('S', "")...), true)
	f.Add(append(append(message('P', "\x00q\x00\x00\x00"), message('B', "\x00\x00\x00\x00\x00\x01\x00\x00\x00\x021\x00\x00\x00")...), append(message('E', "\x00\x00\x00\x00\x00"), message('S', "")...)...), true)
	f.Add(message('D', "S\x00"), true)
	f.Add(message('X', ""), true)
	f.Add([]byte{0, 0, 0, 8, 4, 210, 22, 47}, false) // SSLRequest
	f.Add(startupBytes("alice"), false)
	f.Add(message('d', "1\n"), true)                                      // CopyData outside a COPY
	f.Add(message('F', "\x00\x00\x06\x3e\x00\x00\x00\x00\x00\x00"), true) // FunctionCall
	f.Add(append(message('B', "\x00s\x00\x00\x00\x00\x00\x00\x01\x00\x02"), message('S', "")...), true)
	f.Add([]byte{0, 0, 0, 8, 0, 2, 0, 0}, false) // a protocol 2.0 startup
	f.Fuzz(func(t *testing.T, data []byte, afterStartup bool) {
		srv := New(func(string) Session { return echoSession{} }, Options{Trust: true, IdleTimeout: time.Second, MaxMessageBytes: 1 << 16})
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			srv.serveConn(server)
		}()
		go io.Copy(io.Discard, client) //nolint:errcheck // drains what the server writes
		if afterStartup {
			client.Write(startupBytes("alice")) //nolint:errcheck // the server may already have closed
		}
		client.Write(data) //nolint:errcheck // the server may already have closed
		client.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the server did not return within 5 s")
		}
	})
}

package pgwire

import (
	"encoding/binary"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestEncryptionIsNegotiatedOnce: the first SSLRequest (or GSSENCRequest)
// is answered N, a second of the same kind is refused as the unsupported
// protocol it then is, as PostgreSQL refuses it, and the connection closes.
func TestEncryptionIsNegotiatedOnce(t *testing.T) {
	_, dsn := startFake(t, echoSession{})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		code uint32
		want string
	}{
		{"ssl", sslRequestCode, "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0"},
		{"gss", gssEncRequestCode, "unsupported frontend protocol 1234.5680: server supports 3.0 to 3.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(hangGuard))
			request := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), tc.code)
			answer := make([]byte, 1)
			if _, err := nc.Write(request); err != nil {
				t.Fatal(err)
			}
			if _, err := nc.Read(answer); err != nil || answer[0] != 'N' {
				t.Fatalf("first request answered %q, %v; want N", answer, err)
			}
			if _, err := nc.Write(request); err != nil {
				t.Fatal(err)
			}
			msg, err := pgproto3.NewFrontend(nc, nc).Receive()
			er, ok := msg.(*pgproto3.ErrorResponse)
			if err != nil || !ok || er.Severity != "FATAL" || er.Code != "0A000" || er.Message != tc.want {
				t.Errorf("second request got %+v, %v; want FATAL 0A000 %q", msg, err, tc.want)
			}
		})
	}
}

package pgwire

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/pgerror"
)

// Startup packet codes (PostgreSQL's protocol, "Message Formats").
const (
	maxStartupPacketBytes = 10000 // PostgreSQL's MAX_STARTUP_PACKET_LENGTH
	cancelRequestCode     = 1234<<16 | 5678
	sslRequestCode        = 1234<<16 | 5679
	gssEncRequestCode     = 1234<<16 | 5680
)

// readStartupPacket reads one length-prefixed startup packet straight from
// the socket, without buffering past it: after an SSLRequest the next bytes
// belong to the TLS handshake.
func readStartupPacket(r io.Reader) (code uint32, body []byte, err error) {
	var header [4]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return 0, nil, err
	}
	n := int(binary.BigEndian.Uint32(header[:]))
	if n < 8 || n > maxStartupPacketBytes {
		return 0, nil, fmt.Errorf("invalid length of startup packet: %d", n)
	}
	body = make([]byte, n-4)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, err
	}
	return binary.BigEndian.Uint32(body), body, nil
}

// startup reads SSL/GSS negotiation, cancel requests and the startup message.
func (c *conn) startup() (*pgproto3.StartupMessage, bool) {
	raw := c.nc
	// Encryption is negotiated once each, as PostgreSQL negotiates it: a
	// second request is read as the unknown protocol version it then is.
	sslDone, gssDone := false, false
	for tries := 0; tries < 3; tries++ {
		code, body, err := readStartupPacket(c.nc)
		if err != nil {
			return nil, false
		}
		if tries == 0 {
			c.srv.loginStarted(raw)
		}
		switch {
		case code == sslRequestCode && sslDone, code == gssEncRequestCode && gssDone:
			c.refuseProtocol(code)
			return nil, false
		case code == sslRequestCode:
			sslDone = true
			if c.srv.opts.TLSConfig == nil {
				if _, err := c.nc.Write([]byte{'N'}); err != nil {
					return nil, false
				}
				continue
			}
			if _, err := c.nc.Write([]byte{'S'}); err != nil {
				return nil, false
			}
			tc := tls.Server(c.nc, c.srv.opts.TLSConfig)
			if err := tc.Handshake(); err != nil {
				return nil, false
			}
			c.nc = tc
		case code == gssEncRequestCode:
			gssDone = true
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return nil, false
			}
		case code == cancelRequestCode:
			var m pgproto3.CancelRequest
			if m.Decode(body) == nil {
				c.srv.cancel(m.ProcessID, m.SecretKey)
			}
			return nil, false
		case code>>16 != 3:
			c.refuseProtocol(code)
			return nil, false
		default:
			c.be = pgproto3.NewBackend(inputReader{c}, heldWriter{c})
			c.be.SetMaxBodyLen(c.srv.opts.MaxMessageBytes)
			// Any 3.x is read as 3.0, the version countwall speaks, and told
			// so as PostgreSQL tells it (NegotiateProtocolVersion).
			binary.BigEndian.PutUint32(body, pgproto3.ProtocolVersion30)
			m := &pgproto3.StartupMessage{}
			if err := m.Decode(body); err != nil {
				c.fatal(pgerror.ProtocolViolation, "invalid startup packet layout")
				return nil, false
			}
			c.negotiateProtocol(code, m)
			c.analyst = m.Parameters["user"]
			if c.analyst == "" {
				c.fatal(pgerror.InvalidAuthorization, "no PostgreSQL user name specified in startup packet")
				return nil, false
			}
			return m, true
		}
	}
	return nil, false
}

// refuseProtocol answers a startup in a protocol version other than 3 as
// PostgreSQL's postmaster does: with its "unsupported frontend protocol"
// error, in the old protocol's error format to a client older than 3 (a
// type byte and a NUL-terminated text, which such clients can read), as an
// ErrorResponse otherwise.
func (c *conn) refuseProtocol(version uint32) {
	msg := fmt.Sprintf("unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", version>>16, version&0xffff)
	if version>>16 < 3 {
		c.nc.Write(append([]byte("EFATAL:  "+msg+"\n"), 0)) //nolint:errcheck // the connection closes either way
		return
	}
	c.be = pgproto3.NewBackend(c.nc, c.nc)
	c.fatal(pgerror.FeatureNotSupported, msg)
}

// negotiateProtocol answers a 3.x startup asking for a newer minor
// version, or for protocol options ("_pq_." parameters), as PostgreSQL
// does: with the newest minor version it speaks (0) and the options it
// does not know, before authentication; the client then continues in 3.0.
func (c *conn) negotiateProtocol(version uint32, m *pgproto3.StartupMessage) {
	var unknown []string
	for name := range m.Parameters {
		if strings.HasPrefix(name, "_pq_.") {
			unknown = append(unknown, name)
			delete(m.Parameters, name)
		}
	}
	if version&0xffff == 0 && len(unknown) == 0 {
		return
	}
	sort.Strings(unknown)
	c.be.Send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknown})
}

// greet ends the startup: the settings the client tracks, with the
// values the startup packet gave those it may set (defaults, by lower-cased
// name), its key for cancelling, and ReadyForQuery.
func (c *conn) greet(defaults map[string]string) {
	c.be.Send(&pgproto3.AuthenticationOk{})
	c.reported, c.startupReported = map[string]string{}, map[string]string{}
	for _, p := range [][2]string{
		{"server_version", ServerVersion},
		{"server_encoding", "UTF8"},
		{"client_encoding", "UTF8"},
		{"DateStyle", "ISO, MDY"},
		{"integer_datetimes", "on"},
		{"standard_conforming_strings", "on"},
		{"TimeZone", "UTC"},
		{"IntervalStyle", "postgres"},
		{"is_superuser", "off"},
		{"session_authorization", c.analyst},
		{"application_name", ""},
	} {
		if v, ok := defaults[strings.ToLower(p[0])]; ok {
			p[1] = v
		}
		c.be.Send(&pgproto3.ParameterStatus{Name: p[0], Value: p[1]})
		c.reported[p[0]], c.startupReported[p[0]] = p[1], p[1]
	}
	c.be.Send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: uint32Bytes(c.secret)})
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: byte(c.txStatus)})
	c.be.Flush()
}

func uint32Bytes(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

package pgwire

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"
)

// unexpectedMessage words the refusal of a message pgproto3 read but
// countwall does not take once a session has started: COPY messages
// (countwall never starts a COPY) and password messages. It names the
// message by its type byte and the name PostgreSQL's protocol documentation
// gives it, never by a type of this program.
func unexpectedMessage(msg pgproto3.FrontendMessage) string {
	var typ byte
	var name string
	switch msg.(type) {
	case *pgproto3.CopyData:
		typ, name = 'd', "CopyData"
	case *pgproto3.CopyDone:
		typ, name = 'c', "CopyDone"
	case *pgproto3.CopyFail:
		typ, name = 'f', "CopyFail"
	case *pgproto3.PasswordMessage, *pgproto3.SASLInitialResponse, *pgproto3.SASLResponse, *pgproto3.GSSResponse:
		typ, name = 'p', "PasswordMessage"
	default:
		return "unexpected message from client"
	}
	return fmt.Sprintf("unexpected message type 0x%02x (%s)", typ, name)
}

// invalidMessage words a message pgproto3 could not read. An unknown type
// byte is named as PostgreSQL does ("invalid frontend message type 122");
// pgproto3 reports it only in its error text, "unknown message type: z".
func invalidMessage(err error) string {
	if rest, ok := strings.CutPrefix(err.Error(), "unknown message type: "); ok {
		if r, size := utf8.DecodeRuneInString(rest); size == len(rest) && r < 256 {
			return fmt.Sprintf("invalid frontend message type %d", r)
		}
	}
	return "invalid message from client: malformed message"
}

package pgwire

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"
)

// frontendMessageNames are the names PostgreSQL's protocol documentation
// gives the frontend messages, by type byte, so that an error names the
// message the client sent, not a type of this program.
var frontendMessageNames = map[byte]string{
	'B': "Bind", 'C': "Close", 'd': "CopyData", 'c': "CopyDone", 'f': "CopyFail",
	'D': "Describe", 'E': "Execute", 'H': "Flush", 'F': "FunctionCall",
	'p': "PasswordMessage", 'P': "Parse", 'Q': "Query", 'S': "Sync", 'X': "Terminate",
}

// messageType is the type byte of a frontend message pgproto3 decoded.
func messageType(msg pgproto3.FrontendMessage) byte {
	switch msg.(type) {
	case *pgproto3.CopyData:
		return 'd'
	case *pgproto3.CopyDone:
		return 'c'
	case *pgproto3.CopyFail:
		return 'f'
	case *pgproto3.FunctionCall:
		return 'F'
	case *pgproto3.PasswordMessage, *pgproto3.SASLInitialResponse, *pgproto3.SASLResponse, *pgproto3.GSSResponse:
		return 'p'
	}
	return 0
}

// unexpectedMessage words the refusal of a known message countwall does not
// take at this point (COPY messages: countwall never starts a COPY; a
// password message after authentication).
func unexpectedMessage(msg pgproto3.FrontendMessage) string {
	t := messageType(msg)
	if t == 0 {
		return "unexpected message from client"
	}
	return fmt.Sprintf("unexpected message type 0x%02x (%s)", t, frontendMessageNames[t])
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

package pgwire

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/proxy"
)

// threeRows answers every statement with three rows and counts how often
// it ran: each run is a charge under a claiming mechanism.
type threeRows struct {
	echoSession
	runs *atomic.Int64
}

func (s threeRows) Execute(_ context.Context, st *proxy.Statement, _ []*string) (*proxy.Result, error) {
	s.runs.Add(1)
	if strings.HasPrefix(st.SQL, "SET") {
		return &proxy.Result{Tag: "SET"}, nil
	}
	rows := [][]proxy.Value{{{Text: "a"}, {Int: 1}}, {{Text: "b"}, {Int: 2}}, {{Text: "c"}, {Int: 3}}}
	return &proxy.Result{Columns: []proxy.Column{{Name: "g", Type: proxy.ColumnText}, {Name: "count", Type: proxy.ColumnInt8}},
		Rows: rows, Suppressed: make([]bool, 3), Tag: "SELECT 3", Notice: "charged"}, nil
}

func (threeRows) Describe(_ context.Context, st *proxy.Statement) (*proxy.Description, error) {
	if strings.HasPrefix(st.SQL, "SET") {
		return &proxy.Description{}, nil
	}
	return &proxy.Description{Columns: []proxy.Column{{Name: "g", Type: proxy.ColumnText}, {Name: "count", Type: proxy.ColumnInt8}}}, nil
}

// TestPortalRowLimitAndReexecution: an Execute with a row limit sends that
// many rows and PortalSuspended, the next Execute the rest and the tag of
// the rows it sent, as PostgreSQL does; an Execute of a portal that has
// run to completion sends SELECT 0 and does not run the statement again
// (under a claiming mechanism, a second run would be a second charge).
func TestPortalRowLimitAndReexecution(t *testing.T) {
	var runs atomic.Int64
	fe := pipelineTo(t, func(string) Session { return threeRows{runs: &runs} }, nil)
	fe.Send(&pgproto3.Parse{Query: "SELECT g, COUNT(*) FROM t GROUP BY g"})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Execute{MaxRows: 2})
	fe.Send(&pgproto3.Execute{MaxRows: 2})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	got := receiveTagged(t, fe)
	want := []string{"ParseComplete", "BindComplete", "row a", "row b", "PortalSuspended", "NoticeResponse",
		"row c", "SELECT 1", "SELECT 0", "ReadyForQuery"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the statement ran %d times, want once", n)
	}
	// A statement without rows, executed twice on one portal: the second
	// is refused (55000), as PostgreSQL refuses it, and does not run.
	fe.Send(&pgproto3.Parse{Query: "SET x = 1"})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	got = receiveTagged(t, fe)
	want = []string{"ParseComplete", "BindComplete", "SET", "55000 portal cannot be run: it has run to completion", "ReadyForQuery"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the statements ran %d times, want twice", n)
	}
	// Close of neither a statement nor a portal is a protocol violation,
	// and the rest up to Sync is skipped.
	fe.Send(&pgproto3.Close{ObjectType: 'Q', Name: "x"})
	fe.Send(&pgproto3.Close{ObjectType: 'S', Name: "x"})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	got = receiveTagged(t, fe)
	want = []string{"08P01 invalid CLOSE message subtype 81", "ReadyForQuery"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// receiveTagged collects the server's answers up to ReadyForQuery: a
// command's tag, a row's first value, an error's code and message, else
// the message's type.
func receiveTagged(t *testing.T, fe *pgproto3.Frontend) []string {
	t.Helper()
	var got []string
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.CommandComplete:
			got = append(got, string(m.CommandTag))
		case *pgproto3.DataRow:
			got = append(got, "row "+string(m.Values[0]))
		case *pgproto3.ErrorResponse:
			got = append(got, m.Code+" "+m.Message)
		default:
			got = append(got, fmt.Sprintf("%T", msg)[len("*pgproto3."):])
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return got
		}
	}
}

package pgwire

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// exchange sends msgs and a Sync (a Query is its own) and returns what came back, up to
// ReadyForQuery: each message's type, a CommandComplete as its tag, an
// ErrorResponse as its SQLSTATE, a NoticeResponse as "charged" when it is
// a charge's.
func exchange(t *testing.T, fe *pgproto3.Frontend, msgs ...pgproto3.FrontendMessage) []string {
	t.Helper()
	if _, query := msgs[len(msgs)-1].(*pgproto3.Query); !query {
		msgs = append(msgs, &pgproto3.Sync{})
	}
	for _, m := range msgs {
		fe.Send(m)
	}
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.CommandComplete:
			got = append(got, string(m.CommandTag))
		case *pgproto3.ErrorResponse:
			got = append(got, m.Code)
		case *pgproto3.NoticeResponse:
			note := "Notice"
			if strings.Contains(m.Message, "charged") {
				note = "charged"
			}
			got = append(got, note)
		case *pgproto3.ReadyForQuery:
			return append(got, "ready "+string(m.TxStatus))
		default:
			got = append(got, strings.TrimPrefix(fmt.Sprintf("%T", msg), "*pgproto3."))
		}
	}
}

// parseBindRun is a Parse, Bind, Describe of the portal and Execute of one
// statement, as libpq's PQsendQueryParams sends them.
func parseBindRun(sql string, oids []uint32, resultFormat int16, maxRows uint32, args ...string) []pgproto3.FrontendMessage {
	params := make([][]byte, len(args))
	for i, a := range args {
		params[i] = []byte(a)
	}
	return []pgproto3.FrontendMessage{
		&pgproto3.Parse{Query: sql, ParameterOIDs: oids},
		&pgproto3.Bind{Parameters: params, ResultFormatCodes: []int16{resultFormat}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{MaxRows: maxRows},
	}
}

// TestOwnStatementsInExtendedProtocol: DECLARE with bound parameters,
// FETCH (with a row limit and binary results), MOVE, CLOSE, COPY, typed
// PREPARE and EXECUTE go through Parse, Bind, Describe and Execute as
// psycopg 3 sends them, and answer as PostgreSQL does; under a charging
// mechanism the cursor's query is charged once, at DECLARE, however many
// FETCHes read it.
func TestOwnStatementsInExtendedProtocol(t *testing.T) {
	ts := startServer(t, "laplace", nil, nil)
	fe := pipelineTo(t, func(string) Session { return ts.engine.NewSession(testAnalyst) }, nil)
	query := "SELECT age, COUNT(*) FROM people WHERE age BETWEEN $1 AND $2 GROUP BY age ORDER BY age"
	steps := []struct {
		name string
		msgs []pgproto3.FrontendMessage
		want string
	}{
		{"DECLARE outside a block", parseBindRun(`DECLARE "c" CURSOR FOR `+query, []uint32{23, 23}, 0, 0, "30", "34"),
			"ParseComplete BindComplete NoData 25P01 ready I"},
		{"BEGIN", []pgproto3.FrontendMessage{&pgproto3.Query{String: "BEGIN"}}, "BEGIN ready T"},
		{"DECLARE", parseBindRun(`DECLARE "c" CURSOR FOR `+query, []uint32{23, 23}, 0, 0, "30", "34"),
			"ParseComplete BindComplete NoData DECLARE CURSOR charged ready T"},
		{"Describe the cursor as a portal", []pgproto3.FrontendMessage{&pgproto3.Describe{ObjectType: 'P', Name: "c"}},
			"RowDescription ready T"},
		{"FETCH in binary", parseBindRun(`FETCH FORWARD 2 FROM "c"`, nil, 1, 0),
			"ParseComplete BindComplete RowDescription DataRow DataRow FETCH 2 ready T"},
		{"FETCH with a row limit", append(parseBindRun(`FETCH FORWARD 3 FROM "c"`, nil, 0, 2), &pgproto3.Execute{}, &pgproto3.Execute{}),
			"ParseComplete BindComplete RowDescription DataRow DataRow PortalSuspended DataRow FETCH 1 FETCH 0 ready T"},
		{"MOVE", parseBindRun(`MOVE FORWARD 1 FROM "c"`, nil, 0, 0), "ParseComplete BindComplete NoData MOVE 1 ready T"},
		{"CLOSE", parseBindRun(`CLOSE "c"`, nil, 0, 0), "ParseComplete BindComplete NoData CLOSE CURSOR ready T"},
		{"Describe the closed cursor", []pgproto3.FrontendMessage{&pgproto3.Describe{ObjectType: 'P', Name: "c"}}, "34000 ready E"},
		{"ROLLBACK", []pgproto3.FrontendMessage{&pgproto3.Query{String: "ROLLBACK"}}, "ROLLBACK ready I"},
		{"COPY", parseBindRun("COPY (SELECT sex, COUNT(*) FROM people GROUP BY sex) TO STDOUT", nil, 0, 0),
			"ParseComplete BindComplete NoData CopyOutResponse CopyData CopyData CopyDone COPY 2 charged ready I"},
		{"COPY binds no parameter", parseBindRun("COPY (SELECT COUNT(*) FROM people WHERE age > $1) TO STDOUT", nil, 0, 0),
			"ParseComplete BindComplete NoData 42P02 ready I"},
		{"typed PREPARE", parseBindRun("PREPARE p(int, text) AS SELECT COUNT(*) FROM people WHERE age > $1 AND sex = $2", nil, 0, 0),
			"ParseComplete BindComplete NoData PREPARE ready I"},
		{"EXECUTE", parseBindRun("EXECUTE p(30, 'F')", nil, 0, 0),
			"ParseComplete BindComplete RowDescription DataRow SELECT 1 charged ready I"},
		{"EXECUTE of a wrong type", parseBindRun("EXECUTE p('thirty', 'F')", nil, 0, 0),
			"ParseComplete BindComplete RowDescription 22P02 ready I"},
		{"DEALLOCATE", parseBindRun("DEALLOCATE p", nil, 0, 0), "ParseComplete BindComplete NoData DEALLOCATE ready I"},
		{"EXECUTE of no statement", parseBindRun("EXECUTE p(30, 'F')", nil, 0, 0), "ParseComplete BindComplete NoData 26000 ready I"},
	}
	for _, s := range steps {
		if got := strings.Join(exchange(t, fe, s.msgs...), " "); got != s.want {
			t.Errorf("%s:\n got %s\nwant %s", s.name, got, s.want)
		}
	}
}

// TestDescribeOwnStatements: Describe of a prepared statement the front
// door answers says what PostgreSQL says: PREPARE and COPY take no
// parameters and return no rows, DECLARE takes its query's, a FETCH
// returns its cursor's rows once the cursor exists.
func TestDescribeOwnStatements(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	fe := pipelineTo(t, func(string) Session { return ts.engine.NewSession(testAnalyst) }, nil)
	describe := func(name, sql string) []pgproto3.FrontendMessage {
		return []pgproto3.FrontendMessage{&pgproto3.Parse{Name: name, Query: sql}, &pgproto3.Describe{ObjectType: 'S', Name: name}}
	}
	steps := []struct {
		msgs []pgproto3.FrontendMessage
		want string
	}{
		{describe("d", "DECLARE c CURSOR WITH HOLD FOR SELECT sex, COUNT(*) FROM people WHERE age > $1 GROUP BY sex"),
			"ParseComplete ParameterDescription NoData ready I"},
		{describe("f", "FETCH 1 FROM c"), "ParseComplete ParameterDescription NoData ready I"},
		{[]pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: "d", Parameters: [][]byte{[]byte("30")}}, &pgproto3.Execute{},
			&pgproto3.Describe{ObjectType: 'S', Name: "f"}}, "BindComplete DECLARE CURSOR ParameterDescription RowDescription ready I"},
		{describe("p", "PREPARE q AS SELECT COUNT(*) FROM people WHERE age > $1"), "ParseComplete ParameterDescription NoData ready I"},
		{describe("x", "COPY (SELECT COUNT(*) FROM people) TO STDOUT"), "ParseComplete ParameterDescription NoData ready I"},
		{[]pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: "d", DestinationPortal: "c", Parameters: [][]byte{[]byte("30")}}},
			"42P03 ready I"},
		{[]pgproto3.FrontendMessage{&pgproto3.Close{ObjectType: 'P', Name: "c"}, &pgproto3.Describe{ObjectType: 'P', Name: "c"}},
			"CloseComplete 34000 ready I"},
	}
	for i, s := range steps {
		if got := strings.Join(exchange(t, fe, s.msgs...), " "); got != s.want {
			t.Errorf("step %d:\n got %s\nwant %s", i, got, s.want)
		}
	}
	fe.Send(&pgproto3.Parse{Name: "d2", Query: "DECLARE c CURSOR WITH HOLD FOR SELECT COUNT(*) FROM people WHERE age > $1"})
	fe.Send(&pgproto3.Describe{ObjectType: 'S', Name: "d2"})
	fe.Send(&pgproto3.Sync{})
	fe.Flush()
	var oids []uint32
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if pd, ok := msg.(*pgproto3.ParameterDescription); ok {
			oids = pd.ParameterOIDs
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	if !slices.Equal(oids, []uint32{20}) {
		t.Errorf("DECLARE's parameters described as %v, want [20] (age is bigint)", oids)
	}
}

package pgwire

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/internal/pgtest"
)

// The protocol differential test: the same frontend messages go to
// countwall (exact mechanism) and to a real PostgreSQL 15, and the two
// must answer with the same sequence of messages: their types, command
// tags, SQLSTATEs, transaction states and the number of rows and columns.
// Values are not compared (the two databases hold different rows with the
// same groups); countwall's charge notices are left out.

// protocolCase is one conversation, on a connection of its own.
type protocolCase struct {
	name string
	msgs []pgproto3.FrontendMessage
}

const (
	bySex    = "SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex"
	declareC = "DECLARE c CURSOR FOR SELECT sex, COUNT(*) FROM people WHERE age > $1 GROUP BY sex ORDER BY sex"
)

func query(sql string) *pgproto3.Query { return &pgproto3.Query{String: sql} }

func protocolCases() []protocolCase {
	parse := func(name, sql string) *pgproto3.Parse { return &pgproto3.Parse{Name: name, Query: sql} }
	bind := func(portal, stmt string, args ...string) *pgproto3.Bind {
		b := &pgproto3.Bind{DestinationPortal: portal, PreparedStatement: stmt, ResultFormatCodes: []int16{0}}
		for _, a := range args {
			b.Parameters = append(b.Parameters, []byte(a))
		}
		return b
	}
	exec := func(portal string, maxRows uint32) *pgproto3.Execute {
		return &pgproto3.Execute{Portal: portal, MaxRows: maxRows}
	}
	describe := func(kind byte, name string) *pgproto3.Describe {
		return &pgproto3.Describe{ObjectType: kind, Name: name}
	}
	closeOf := func(kind byte, name string) *pgproto3.Close { return &pgproto3.Close{ObjectType: kind, Name: name} }
	sync := &pgproto3.Sync{}
	// run is libpq's PQsendQueryParams: Parse, Bind, Describe, Execute, Sync.
	run := func(sql string, args ...string) []pgproto3.FrontendMessage {
		return []pgproto3.FrontendMessage{parse("", sql), bind("", "", args...), describe('P', ""), exec("", 0), sync}
	}
	cat := func(parts ...any) []pgproto3.FrontendMessage {
		var out []pgproto3.FrontendMessage
		for _, p := range parts {
			switch p := p.(type) {
			case pgproto3.FrontendMessage:
				out = append(out, p)
			case []pgproto3.FrontendMessage:
				out = append(out, p...)
			}
		}
		return out
	}
	return []protocolCase{
		{"max_rows, then the rest, then a finished portal", cat(parse("", bySex), bind("", ""), describe('P', ""),
			exec("", 1), exec("", 1), exec("", 0), exec("", 0), sync)},
		{"max_rows past the rows", cat(parse("", bySex), bind("", ""), exec("", 5), exec("", 5), sync)},
		{"a finished portal in a block, after Sync", cat(query("BEGIN"), parse("s", bySex), bind("p", "s"), exec("p", 0), sync,
			exec("p", 0), exec("p", 1), sync, query("COMMIT"), exec("p", 0), sync)},
		{"a portal without rows run twice", cat(parse("", "SET application_name = 'x'"), bind("", ""), exec("", 0), exec("", 0), sync)},
		{"unknown names", cat(describe('S', "nope"), sync, describe('P', "nope"), sync, closeOf('S', "nope"), closeOf('P', "nope"), sync,
			closeOf('Q', "nope"), sync, bind("", "nope"), sync, exec("nope", 0), sync)},
		{"several statements in one Query", cat(query("SELECT COUNT(*) FROM people; " + bySex + ";"))},
		{"an error stops the rest", cat(query("SELECT COUNT(*) FROM people; SELECT COUNT(*) FROM nowhere; SELECT COUNT(*) FROM people"),
			query("SELECT COUNT(*) FROM people"), query("BEGIN; SELECT COUNT(*) FROM nowhere; SELECT COUNT(*) FROM people"), query("ROLLBACK"))},
		{"several statements in one Parse", cat(parse("", "SELECT COUNT(*) FROM people; SELECT COUNT(*) FROM people"), sync)},
		{"one implicit transaction", cat(query("SELECT COUNT(*) FROM people; SAVEPOINT a"), query("SELECT COUNT(*) FROM people; BEGIN"),
			query("COMMIT"), query("BEGIN; SELECT COUNT(*) FROM people; COMMIT; SELECT COUNT(*) FROM people"))},
		{"cursors in one Query", cat(query("DECLARE c CURSOR FOR "+bySex+"; FETCH 1 FROM c; MOVE 1 IN c; FETCH ALL FROM c; CLOSE c"),
			query("DECLARE c CURSOR FOR "+bySex+"; FETCH 1 FROM c"), query("FETCH 1 FROM c"))},
		{"a cursor over the extended protocol, as psycopg 3 reads it", cat(query("BEGIN"),
			parse("", declareC), describe('S', ""), bind("", "", "30"), describe('P', ""), exec("", 0), sync,
			describe('P', "c"), sync,
			run("FETCH FORWARD 1 FROM c"),
			parse("", "FETCH FORWARD 5 FROM c"), bind("", ""), describe('P', ""), exec("", 1), exec("", 1), exec("", 1), sync,
			run("MOVE FORWARD 1 FROM c"), run("CLOSE c"), describe('P', "c"), sync, query("COMMIT"))},
		{"cursor names and portal names", cat(query("BEGIN"), run(declareC, "30"), parse("f", "FETCH 1 FROM c"), describe('S', "f"),
			bind("c", "f"), sync, query("ROLLBACK"), query("BEGIN"), run(declareC, "30"), closeOf('P', "c"), sync,
			run("FETCH 1 FROM c"), query("ROLLBACK"))},
		{"DECLARE over the extended protocol outside a block", cat(run(declareC, "30"),
			run("DECLARE h CURSOR WITH HOLD FOR "+bySex), run("FETCH ALL FROM h"), run("CLOSE h"))},
		{"own statements' portals run twice", cat(query("BEGIN"), parse("", "DECLARE c CURSOR FOR "+bySex), bind("", ""), exec("", 0), exec("", 0), sync,
			query("ROLLBACK"), parse("", "COPY ("+bySex+") TO STDOUT"), bind("", ""), exec("", 0), exec("", 0), sync,
			parse("", "PREPARE p AS "+bySex), bind("", ""), exec("", 0), exec("", 0), sync,
			parse("", "EXECUTE p"), bind("", ""), exec("", 1), exec("", 0), exec("", 0), sync)},
		{"Execute of a cursor by its name", cat(query("BEGIN"), run(declareC, "30"), exec("c", 1), exec("c", 1), exec("c", 0), exec("c", 0), sync, query("COMMIT"))},
		{"COPY over the extended protocol", cat(run("COPY ("+bySex+") TO STDOUT"), run("COPY ("+bySex+") TO STDOUT (FORMAT csv, HEADER)"),
			parse("", "COPY (SELECT COUNT(*) FROM people WHERE age > $1) TO STDOUT"), describe('S', ""), bind("", ""), exec("", 0), sync)},
		{"PREPARE and EXECUTE over the extended protocol", cat(
			run("PREPARE p(int, text) AS SELECT COUNT(*) FROM people WHERE age > $1 AND sex = $2"),
			parse("", "EXECUTE p(30, 'F')"), describe('S', ""), bind("", ""), exec("", 0), exec("", 0), sync,
			run("EXECUTE p('thirty', 'F')"), run("EXECUTE p(30)"), run("DEALLOCATE p"), describe('S', "p"), sync,
			run("EXECUTE p(30, 'F')"))},
		{"EXECUTE with a parameter of its own", cat(run("PREPARE p(int) AS SELECT COUNT(*) FROM people WHERE age > $1"),
			parse("", "EXECUTE p($1)"), sync,
			&pgproto3.Parse{Query: "EXECUTE p($1)", ParameterOIDs: []uint32{23}}, describe('S', ""), bind("", "", "30"), describe('P', ""), exec("", 0), sync,
			&pgproto3.Parse{Name: "e", Query: "EXECUTE p($1::int)", ParameterOIDs: []uint32{20}}, describe('S', "e"), sync,
			run("EXECUTE p(40.5)"), run("EXECUTE p(-40.5)"))},
		{"typed PREPARE in SQL", cat(query("PREPARE q(int, text) AS SELECT COUNT(*) FROM people WHERE age > $1 AND sex = $2; EXECUTE q(30, 'F')"),
			query("EXECUTE q('x', 'F')"), query("PREPARE r(widget) AS SELECT COUNT(*) FROM people"), query("PREPARE r AS FETCH 1 FROM c"),
			query("PREPARE r AS COMMIT"), query("PREPARE r AS DISCARD ALL"), query("PREPARE r AS SET application_name = 'x'"),
			query("PREPARE r AS SHOW application_name"), query("PREPARE r AS RESET ALL"), query("DEALLOCATE ALL"))},
		{"a SET undone by a failure before Sync", cat(parse("", "SET application_name = 'p'"), bind("", ""), exec("", 0),
			parse("", "SELECT COUNT(*) FROM nowhere"), sync, run("SET application_name = 'q'"), run("RESET application_name"),
			query("SET application_name = 'r'; SELECT COUNT(*) FROM nowhere"))},
		{"DISCARD, as a pool sends it between clients", cat(query("PREPARE q AS "+bySex), parse("s", bySex), sync,
			query("DECLARE h CURSOR WITH HOLD FOR "+bySex), query("SET application_name = 'before'"),
			query("BEGIN; DISCARD ALL"), query("ROLLBACK"), query("SELECT 1; DISCARD ALL"),
			query("DISCARD ALL"), query("EXECUTE q"), describe('S', "s"), sync, query("FETCH 1 FROM h"),
			query("DISCARD PLANS; DISCARD SEQUENCES; DISCARD TEMPORARY; DISCARD TEMP"), query("DISCARD"), query("DISCARD nothing"),
			run("DISCARD ALL"))},
	}
}

// TestPostgresProtocolDifferential sends each case to both servers and
// compares the transcripts message by message.
func TestPostgresProtocolDifferential(t *testing.T) {
	srv := pgtest.Server(t)
	url := srv.NewDatabase(t)
	if err := pgtest.ExecURL(url, `CREATE TABLE people (id bigint NOT NULL, age bigint, sex text)`,
		`INSERT INTO people VALUES (1, 25, 'F'), (2, 31, 'F'), (3, 40, 'M'), (4, 35, 'M'), (5, 50, 'F')`); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, "exact", nil, nil)
	for _, tc := range protocolCases() {
		t.Run(tc.name, func(t *testing.T) {
			mine := transcript(t, ts.dsn(testAnalyst, testPassword), tc.msgs)
			theirs := transcript(t, url, tc.msgs)
			if strings.Join(mine, "\n") != strings.Join(theirs, "\n") {
				t.Errorf("countwall and PostgreSQL differ:\n%s", sideBySide(mine, theirs))
			}
		})
	}
}

// transcript sends msgs on a fresh connection to dsn and reads the answers
// up to the ReadyForQuery of each Sync and Query.
func transcript(t *testing.T, dsn string, msgs []pgproto3.FrontendMessage) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	hj, err := conn.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	defer hj.Conn.Close()
	fe := hj.Frontend
	waits := 0
	for _, m := range msgs {
		fe.Send(m)
		switch m.(type) {
		case *pgproto3.Sync, *pgproto3.Query:
			waits++
		}
	}
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for waits > 0 {
		msg, err := fe.Receive()
		if err != nil {
			return append(got, "connection: "+err.Error())
		}
		if line, ok := describeMessage(msg); ok {
			got = append(got, line)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			waits--
		}
	}
	return got
}

// describeMessage is what the comparison keeps of a backend message; false
// for a notice of severity NOTICE (countwall's charges).
func describeMessage(msg pgproto3.BackendMessage) (string, bool) {
	switch m := msg.(type) {
	case *pgproto3.CommandComplete:
		return "CommandComplete " + string(m.CommandTag), true
	case *pgproto3.ErrorResponse:
		return "ErrorResponse " + m.Severity + " " + m.Code, true
	case *pgproto3.NoticeResponse:
		return "NoticeResponse " + m.Severity + " " + m.Code, m.Severity != "NOTICE"
	case *pgproto3.ReadyForQuery:
		return "ReadyForQuery " + string(m.TxStatus), true
	case *pgproto3.ParameterDescription:
		return fmt.Sprintf("ParameterDescription %v", m.ParameterOIDs), true
	case *pgproto3.RowDescription:
		return fmt.Sprintf("RowDescription of %d", len(m.Fields)), true
	case *pgproto3.DataRow:
		return fmt.Sprintf("DataRow of %d", len(m.Values)), true
	case *pgproto3.CopyOutResponse:
		return fmt.Sprintf("CopyOutResponse of %d", len(m.ColumnFormatCodes)), true
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", msg), "*pgproto3."), true
}

// sideBySide lays two transcripts out in columns, marking the lines that
// differ.
func sideBySide(mine, theirs []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %-40s %s\n", "countwall", "PostgreSQL")
	for i := range max(len(mine), len(theirs)) {
		m, p := lineAt(mine, i), lineAt(theirs, i)
		mark := " "
		if m != p {
			mark = "!"
		}
		fmt.Fprintf(&b, "%s %-40s %s\n", mark, m, p)
	}
	return b.String()
}

// TestPostgresStartupSettingsDifferential connects to both servers with
// settings in the startup packet, as psql sends application_name and JDBC
// DateStyle and extra_float_digits: SHOW, current_setting and the
// ParameterStatus values must agree with PostgreSQL's, before and after a
// SET, and RESET, RESET ALL and DISCARD ALL return to the startup values.
func TestPostgresStartupSettingsDifferential(t *testing.T) {
	srv := pgtest.Server(t)
	url := srv.NewDatabase(t)
	ts := startServer(t, "exact", nil, nil)
	params := map[string]string{"application_name": "myapp", "DateStyle": "ISO, DMY", "extra_float_digits": "2",
		"client_min_messages": "warning", "search_path": "public"}
	script := []string{"SHOW application_name", "SELECT current_setting('application_name')", "SHOW datestyle",
		"SHOW extra_float_digits", "SHOW client_min_messages", "SHOW search_path",
		"SET application_name = 'other'", "SHOW application_name", "RESET application_name", "SHOW application_name",
		"SET DateStyle = 'ISO, YMD'", "SET extra_float_digits = 3", "RESET ALL", "SHOW DateStyle", "SHOW extra_float_digits",
		"SET application_name = 'again'", "DISCARD ALL", "SHOW application_name"}
	run := func(dsn string) []string {
		cfg, err := pgconn.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range params {
			cfg.RuntimeParams[k] = v
		}
		ctx := context.Background()
		conn, err := pgconn.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		status := func() string {
			return fmt.Sprintf("status %s|%s", conn.ParameterStatus("application_name"), conn.ParameterStatus("DateStyle"))
		}
		out := []string{status()}
		for _, q := range script {
			res, err := conn.Exec(ctx, q).ReadAll()
			if err != nil {
				out = append(out, q+": "+err.Error())
				continue
			}
			for _, r := range res[0].Rows {
				out = append(out, fmt.Sprintf("%s: %q", q, r))
			}
			out = append(out, status())
		}
		return out
	}
	mine, theirs := run(ts.dsn(testAnalyst, testPassword)), run(url)
	if strings.Join(mine, "\n") != strings.Join(theirs, "\n") {
		t.Errorf("countwall and PostgreSQL differ:\n%s", sideBySide(mine, theirs))
	}
}

# The client matrix's psycopg2 report (see clients_test.go): psycopg2
# pastes parameters into the text, reads a named cursor itersize rows at a
# time and copies out with copy_expert.
import io
import sys

import psycopg2

host, port, user, password = sys.argv[1:5]
conn = psycopg2.connect(host=host, port=port, user=user, password=password, dbname="countwall")
conn.autocommit = True
cur = conn.cursor()


def failed(key, e, message=True):
    text = e.pgcode + (" " + e.diag.message_primary if message else "")
    print("%s: %s" % (key, text))


cur.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name")
tables = [r[0] for r in cur.fetchall()]
cur.execute("SELECT column_name, data_type FROM information_schema.columns"
            " WHERE table_schema = 'public' AND table_name = %s ORDER BY ordinal_position", ("visits",))
print("schema:", " ".join(tables + ["%s:%s" % r for r in cur.fetchall()]))

cur.execute("SELECT COUNT(*) FROM visits WHERE age > %s AND sex = %s AND score > %s", (25, "F", 2.5))
print("count:", cur.fetchone()[0])
try:
    cur.execute("SELECT COUNT(*) FROM visits WHERE sex = %s", (None,))
    print("null:", cur.fetchone()[0])
except psycopg2.Error as e:
    failed("null", e, message=False)

conn.autocommit = False
named = conn.cursor(name="matrix")
named.itersize = 6
named.execute("SELECT age, COUNT(*) FROM visits GROUP BY age ORDER BY age")
chunks, rows, types = [], [], ""
while True:
    got = named.fetchmany(named.itersize)
    if not got:
        break
    chunks.append(str(len(got)))
    rows += ["%s=%s" % r for r in got]
    types = types or "%s %s" % (type(got[0][0]).__name__, type(got[0][1]).__name__)
named.close()
conn.commit()
conn.autocommit = True
print("chunks:", " ".join(chunks))
print("rows:", " ".join(rows))
print("types:", types)

out = io.StringIO()
cur.copy_expert("COPY (SELECT sex, COUNT(*) FROM visits GROUP BY sex ORDER BY sex) TO STDOUT WITH (FORMAT csv, HEADER true)", out)
print("copy:", "|".join(out.getvalue().splitlines()))
try:
    cur.execute("SELECT score FROM visits")
    print("refused: no error")
except psycopg2.Error as e:
    failed("refused", e)

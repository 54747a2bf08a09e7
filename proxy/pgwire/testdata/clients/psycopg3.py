"""psycopg 3 against countwall, as an analyst uses it without configuring
anything for the firewall: one line a step, "step: answer", which the Go
test (clients_psycopg3_test.go) compares with the answers it computes.

Arguments: host port user password.
"""
import sys

import psycopg
from psycopg.types import TypeInfo

host, port, user, password = sys.argv[1:5]
conninfo = dict(host=host, port=port, user=user, password=password, dbname="countwall")
COUNT = "SELECT COUNT(*) FROM people WHERE age > %s AND sex = %s"
GROUPS = "SELECT age, COUNT(*) FROM people WHERE age BETWEEN %s AND %s GROUP BY age ORDER BY age"


def show(step, value):
    print(f"{step}: {value}", flush=True)


def groups(rows):
    """A GROUP BY's answer: how many rows (one an age of the declared
    domain), then the ages counted."""
    return f"{len(rows)} rows; " + " ".join(f"{age}={n}" for age, n in rows if n)


# Defaults: a transaction opened by the first statement, statements
# prepared by the driver after 5 executions, at most 100 of them kept, so
# that 120 statements run 6 times each make it DEALLOCATE the oldest (the
# test's server keeps at most 101); a rollback then DEALLOCATEs ALL.
conn = psycopg.connect(**conninfo)
show("defaults", conn.execute(COUNT, (30, "F")).fetchone()[0])
show("float and text", conn.execute("SELECT COUNT(*) FROM people WHERE age > %s AND sex = %s", (30.5, "F")).fetchone()[0])
answers = set()
for i in range(120):
    for _ in range(6):
        answers.add(conn.execute(COUNT + f" AND age < {200 + i}", (30, "F")).fetchone()[0])
show("720 executions", sorted(answers))
conn.rollback()
show("after rollback", conn.execute(COUNT, (30, "F")).fetchone()[0])

# Type introspection inside a transaction: TypeInfo.fetch wraps its query
# in a savepoint.
show("type info", (lambda t: (t.name, t.oid, t.array_oid))(TypeInfo.fetch(conn, "int8")))
conn.commit()

# prepare=True: Parse under a name at the first execution.
with conn.cursor() as cur:
    show("prepare=True", cur.execute(COUNT, (30, "F"), prepare=True).fetchone()[0])

# Binary parameters (%b) and binary results.
with conn.cursor(binary=True) as cur:
    cur.execute("SELECT COUNT(*) FROM people WHERE age > %b AND sex = %b", (30, "F"))
    show("binary", cur.fetchone()[0])
    cur.execute(GROUPS.replace("%s", "%b"), (30, 32))
    show("binary groups", groups(cur.fetchall()))
conn.commit()

# Pipeline mode: the statements go out before any answer is read.
with conn.pipeline():
    a = conn.execute(COUNT, (30, "F"))
    b = conn.execute(COUNT, (30, "M"))
    c = conn.execute(GROUPS, (30, 32))
show("pipeline", f"{a.fetchone()[0]} {b.fetchone()[0]} {groups(c.fetchall())}")
conn.commit()

# A server-side cursor read in chunks: DECLARE with bound parameters,
# Describe of the cursor as a portal, FETCH FORWARD n; text and binary.
for binary in (False, True):
    with conn.cursor(name="chunks", binary=binary) as cur:
        cur.itersize = 3
        cur.execute(GROUPS, (30, 39))
        first = cur.fetchmany(4)
        rest = list(cur)
        show(f"server-side cursor binary={binary}", f"{len(first)} then {groups(first + rest)}")
    conn.commit()

# COPY of a GROUP BY out, rows and CSV with a header.
with conn.cursor() as cur:
    with cur.copy("COPY (SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex) TO STDOUT") as copy:
        show("copy rows", list(copy.rows()))
    with cur.copy("COPY (SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex) TO STDOUT (FORMAT csv, HEADER)") as copy:
        show("copy csv", b"".join(bytes(d) for d in copy).decode().replace("\n", "|"))
conn.commit()

# A refused statement: a clear error, and the connection goes on.
try:
    conn.execute("DELETE FROM people")
    show("refused", "accepted")
except psycopg.Error as e:
    show("refused", f"{type(e).__name__} {e.sqlstate} {e.diag.message_primary}")
conn.rollback()
show("after refusal", conn.execute(COUNT, (30, "F")).fetchone()[0])
conn.close()

# The client matrix's SQLAlchemy 1.4 + pandas report (see clients_test.go):
# the inspector discovers the schema, text() binds the parameters, and
# pandas reads chunksize rows at a time through a server-side cursor
# (stream_results, which psycopg2 turns into a named cursor).
import io
import sys

import pandas as pd
from sqlalchemy import create_engine, exc, inspect, text

host, port, user, password = sys.argv[1:5]
engine = create_engine("postgresql+psycopg2://%s:%s@%s:%s/countwall" % (user, password, host, port))
i = inspect(engine)
columns = ["%s:%s" % (c["name"], c["type"]) for c in i.get_columns("visits")]
print("schema:", " ".join(i.get_table_names() + columns))

with engine.connect() as conn:
    n = conn.execute(text("SELECT COUNT(*) FROM visits WHERE age > :age AND sex = :sex AND score > :score"),
                     {"age": 25, "sex": "F", "score": 2.5}).scalar()
    print("count:", n)
    try:
        n = conn.execute(text("SELECT COUNT(*) FROM visits WHERE sex = :sex"), {"sex": None}).scalar()
        print("null:", n)
    except exc.DBAPIError as e:
        print("null:", e.orig.pgcode)

with engine.connect() as conn:
    streaming = conn.execution_options(stream_results=True)
    chunks, rows, types = [], [], ""
    for df in pd.read_sql(text("SELECT age, COUNT(*) AS n FROM visits GROUP BY age ORDER BY age"), streaming, chunksize=6):
        chunks.append(str(len(df)))
        rows += ["%s=%s" % (a, c) for a, c in zip(df["age"], df["n"])]
        types = types or "%s %s" % (df["age"].dtype, df["n"].dtype)
    print("chunks:", " ".join(chunks))
    print("rows:", " ".join(rows))
    print("types:", types)

raw = engine.raw_connection()
out = io.StringIO()
raw.cursor().copy_expert("COPY (SELECT sex, COUNT(*) FROM visits GROUP BY sex ORDER BY sex) TO STDOUT WITH (FORMAT csv, HEADER true)", out)
raw.close()
print("copy:", "|".join(out.getvalue().splitlines()))

try:
    pd.read_sql(text("SELECT score FROM visits"), engine)
    print("refused: no error")
except exc.DBAPIError as e:
    print("refused:", e.orig.pgcode, e.orig.diag.message_primary)

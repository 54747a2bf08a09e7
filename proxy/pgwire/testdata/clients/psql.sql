-- The client matrix's psql report (see clients_test.go), run with -At and
-- the parameters as -v variables: \dt and \d discover the schema, :age,
-- :'sex' and :score are psql's parameters, \gdesc names the answer's
-- types as the server describes them, a cursor is read in chunks,
-- \copy copies out to a file, and LAST_ERROR_* hold a refusal.
\echo schema:
\dt
\d visits
SELECT COUNT(*) AS n FROM visits WHERE age > :age AND sex = :'sex' AND score > :score \gset
\echo count: :n
\set nothing NULL
SELECT COUNT(*) AS nulls FROM visits WHERE sex = :nothing \gset
\echo null: :nulls
\echo types:
SELECT age, COUNT(*) FROM visits GROUP BY age ORDER BY age \gdesc
BEGIN;
DECLARE matrix CURSOR FOR SELECT age, COUNT(*) FROM visits GROUP BY age ORDER BY age;
\echo rows:
FETCH 6 FROM matrix;
\echo chunk: :ROW_COUNT
FETCH 6 FROM matrix;
\echo chunk: :ROW_COUNT
FETCH 6 FROM matrix;
\echo chunk: :ROW_COUNT
FETCH 6 FROM matrix;
\echo chunk: :ROW_COUNT
FETCH 6 FROM matrix;
\echo chunk: :ROW_COUNT
COMMIT;
\copy (SELECT sex, COUNT(*) FROM visits GROUP BY sex ORDER BY sex) TO 'matrix.csv' WITH (FORMAT csv, HEADER true)
SELECT score FROM visits;
\echo refused: :LAST_ERROR_SQLSTATE :LAST_ERROR_MESSAGE

// The client matrix's node-postgres report (see clients_test.go): pg binds
// parameters as untyped text, pg-cursor reads a portal n rows at a time
// (Execute with a row limit), pg-copy-streams copies out.
const { Client } = require('pg')
const Cursor = require('pg-cursor')
const { to: copyTo } = require('pg-copy-streams')

const [host, port, user, password] = process.argv.slice(2)

async function main () {
  const client = new Client({ host, port: Number(port), user, password, database: 'countwall' })
  await client.connect()
  const tables = await client.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name")
  const columns = await client.query("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position", ['visits'])
  console.log('schema: ' + tables.rows.map(r => r.table_name).concat(columns.rows.map(r => r.column_name + ':' + r.data_type)).join(' '))

  const count = await client.query('SELECT COUNT(*) AS n FROM visits WHERE age > $1 AND sex = $2 AND score > $3', [25, 'F', 2.5])
  console.log('count: ' + count.rows[0].n)
  await client.query('SELECT COUNT(*) AS n FROM visits WHERE sex = $1', [null]).then(
    r => console.log('null: ' + r.rows[0].n), e => console.log('null: ' + e.code))

  try {
    const cursor = client.query(new Cursor('SELECT age, COUNT(*) AS n FROM visits GROUP BY age ORDER BY age'))
    const chunks = []; const rows = []; let types = ''
    for (;;) {
      const got = await cursor.read(6)
      if (got.length === 0) break
      chunks.push(got.length)
      for (const r of got) rows.push(r.age + '=' + r.n)
      types = types || typeof got[0].age + ' ' + typeof got[0].n
    }
    await cursor.close()
    console.log('chunks: ' + chunks.join(' '))
    console.log('rows: ' + rows.join(' '))
    console.log('types: ' + types)
  } catch (e) {
    console.log('chunks: ' + e.code + ' ' + e.message)
    console.log('rows: ' + e.code + ' ' + e.message)
    console.log('types: ' + e.code)
  }

  const parts = []
  const stream = client.query(copyTo('COPY (SELECT sex, COUNT(*) FROM visits GROUP BY sex ORDER BY sex) TO STDOUT WITH (FORMAT csv, HEADER true)'))
  for await (const part of stream) parts.push(part)
  console.log('copy: ' + Buffer.concat(parts).toString().trimEnd().split('\n').join('|'))

  await client.query('SELECT score FROM visits').then(
    () => console.log('refused: no error'), e => console.log('refused: ' + e.code + ' ' + e.message))
  await client.end()
}

main().catch(e => { console.error(e); process.exit(1) })

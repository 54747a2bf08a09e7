// The client matrix's postgres.js report (see clients_test.go): postgres.js
// prepares every statement (named, through the extended protocol), reads
// .cursor(n) n rows at a time and copies out with .readable().
const postgres = require('postgres')

const [host, port, user, password] = process.argv.slice(2)

async function main () {
  const sql = postgres({ host, port: Number(port), user, password, database: 'countwall', max: 1, onnotice: () => {} })
  const tables = await sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`
  const columns = await sql`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name = ${'visits'} ORDER BY ordinal_position`
  console.log('schema: ' + tables.map(r => r.table_name).concat(columns.map(r => r.column_name + ':' + r.data_type)).join(' '))

  const [count] = await sql`SELECT COUNT(*) AS n FROM visits WHERE age > ${25} AND sex = ${'F'} AND score > ${2.5}`
  console.log('count: ' + count.n)
  await sql`SELECT COUNT(*) AS n FROM visits WHERE sex = ${null}`.then(
    ([r]) => console.log('null: ' + r.n), e => console.log('null: ' + e.code))

  try {
    const chunks = []; const rows = []; let types = ''
    for await (const got of sql`SELECT age, COUNT(*) AS n FROM visits GROUP BY age ORDER BY age`.cursor(6)) {
      chunks.push(got.length)
      for (const r of got) rows.push(r.age + '=' + r.n)
      types = types || typeof got[0].age + ' ' + typeof got[0].n
    }
    console.log('chunks: ' + chunks.join(' '))
    console.log('rows: ' + rows.join(' '))
    console.log('types: ' + types)
  } catch (e) {
    console.log('chunks: ' + e.code + ' ' + e.message)
    console.log('rows: ' + e.code + ' ' + e.message)
    console.log('types: ' + e.code)
  }

  try {
    const parts = []
    const stream = await sql`COPY (SELECT sex, COUNT(*) FROM visits GROUP BY sex ORDER BY sex) TO STDOUT WITH (FORMAT csv, HEADER true)`.readable()
    for await (const part of stream) parts.push(part)
    console.log('copy: ' + Buffer.concat(parts).toString().trimEnd().split('\n').join('|'))
  } catch (e) {
    console.log('copy: ' + e.code + ' ' + e.message)
  }

  await sql`SELECT score FROM visits`.then(
    () => console.log('refused: no error'), e => console.log('refused: ' + e.code + ' ' + e.message))
  await sql.end()
}

main().catch(e => { console.error(e); process.exit(1) })

// kafkajs over serve's secured listeners (run by tests/server/test_serve_kafkajs.py).
//
//   node security.mjs '<JSON list of cases>'
//
// Each case: {name, broker, ssl: {ca, cert, key} | null, sasl: {mechanism, username,
// password} | null, topic}. For each: an admin client creates the topic, a producer sends
// three records, a group consumer (fromBeginning) reads them back; a case with
// "expectFailure" only connects and reports the error's name and message. Prints one
// JSON object on stdout: {name: {values} | {error, message}}.
import fs from 'node:fs'
import kafkajs from 'kafkajs'

const { Kafka, logLevel } = kafkajs
const cases = JSON.parse(process.argv[2])

function within (ms, what, promise) {
  let timer
  const limit = new Promise((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result in ${ms} ms`)), ms)
  })
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer))
}

function client (c) {
  const ssl = c.ssl
    ? { ca: [fs.readFileSync(c.ssl.ca, 'utf-8')],
        ...(c.ssl.cert ? { cert: fs.readFileSync(c.ssl.cert, 'utf-8'), key: fs.readFileSync(c.ssl.key, 'utf-8') } : {}) }
    : false
  return new Kafka({
    clientId: `kafkalog-kafkajs-${c.name}`,
    brokers: [c.broker],
    ssl,
    sasl: c.sasl || undefined,
    logLevel: logLevel.NOTHING,
    retry: { retries: c.expectFailure ? 0 : 3, initialRetryTime: 100 },
    connectionTimeout: 5000,
    requestTimeout: 10000,
  })
}

async function run (c) {
  const kafka = client(c)
  if (c.expectFailure) {
    const admin = kafka.admin()
    try {
      await within(15000, 'connect', admin.connect())
      await admin.listTopics()
      return { error: null }
    } catch (e) {
      return { error: e.name, message: e.message }
    } finally {
      await admin.disconnect().catch(() => {})
    }
  }
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic: c.topic, numPartitions: 1 }] })
  await admin.disconnect()
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  await producer.send({ topic: c.topic, messages: [0, 1, 2].map((i) => ({ value: `${c.topic}-${i}` })) })
  await producer.disconnect()
  const consumer = kafka.consumer({ groupId: `g-${c.topic}` })
  await consumer.connect()
  await consumer.subscribe({ topics: [c.topic], fromBeginning: true })
  const values = []
  await within(20000, 'consume', new Promise((resolve) => {
    consumer.run({
      eachMessage: async ({ message }) => {
        values.push(message.value.toString())
        if (values.length === 3) resolve()
      },
    })
  }))
  await consumer.disconnect()
  return { values }
}

const out = {}
for (const c of cases) out[c.name] = await run(c)
console.log(JSON.stringify(out))
process.exit(0)

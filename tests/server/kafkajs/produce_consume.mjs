// kafkajs against `kafkalog serve` (run by tests/server/test_serve_kafkajs.py).
//
//   node produce_consume.mjs <host:port> <n records> <base timestamp ms>
//
// Creates one single-partition topic per (codec, acks) - codecs none and gzip (kafkajs
// needs plugins for snappy, lz4 and zstd), acks 0, 1 and -1 (idempotent producer) - and
// produces N records to each in several sends; then a group consumer (fromBeginning)
// reads every topic back and commits, a second one seeks to offset 77, and the admin
// client reads the committed, earliest/latest and by-timestamp offsets. Prints one JSON
// object on stdout; the Python test checks it and the log directory.
import kafkajs from 'kafkajs'

const { Kafka, CompressionTypes, logLevel } = kafkajs
const [broker, nArg, tsArg] = process.argv.slice(2)
const N = Number(nArg)
const BASE_TS = Number(tsArg)
const CODECS = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP }
const ACKS = [0, 1, -1]
const SENDS = 5

const kafka = new Kafka({
  clientId: 'kafkalog-kafkajs-test',
  brokers: [broker],
  logLevel: logLevel.ERROR,
  retry: { retries: 3, initialRetryTime: 100 },
  connectionTimeout: 5000,
  requestTimeout: 10000,
})

const topicName = (codec, acks) => `kjs-${codec}-${acks === -1 ? 'all' : acks}`
const topics = []
for (const codec of Object.keys(CODECS)) for (const acks of ACKS) topics.push([codec, acks])
const record = (i) => ({
  key: `key-${i}`,
  value: `value-${String(i).padStart(5, '0')}-` + 'x'.repeat(i % 50),
  timestamp: String(BASE_TS + i * 10),
  partition: 0,
})

function within (ms, what, promise) {
  let timer
  const limit = new Promise((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result in ${ms} ms`)), ms)
  })
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer))
}

async function produce () {
  const out = {}
  const plain = kafka.producer({ allowAutoTopicCreation: false })
  const idempotent = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await plain.connect()
  await idempotent.connect()
  for (const [codec, acks] of topics) {
    const topic = topicName(codec, acks)
    const producer = acks === -1 ? idempotent : plain
    const offsets = []
    const per = Math.ceil(N / SENDS)
    for (let lo = 0; lo < N; lo += per) {
      const messages = []
      for (let i = lo; i < Math.min(N, lo + per); i++) messages.push(record(i))
      const meta = await producer.send({ topic, acks, compression: CODECS[codec], messages })
      offsets.push(acks === 0 ? null : Number(meta[0].baseOffset))
    }
    out[topic] = offsets
  }
  await plain.disconnect()
  await idempotent.disconnect()
  return out
}

async function consumeAll (groupId) {
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, heartbeatInterval: 1000 })
  const got = {}
  let total = 0
  await consumer.connect()
  await consumer.subscribe({ topics: topics.map(([c, a]) => topicName(c, a)), fromBeginning: true })
  let done
  const finished = new Promise((resolve) => { done = resolve })
  await consumer.run({
    autoCommit: true,
    eachMessage: async ({ topic, partition, message }) => {
      (got[topic] ??= []).push([Number(message.offset), partition, message.key.toString(),
        message.value.toString(), Number(message.timestamp)])
      if (++total === N * topics.length) done()
    },
  })
  await within(20000, 'consuming every record', finished)
  await consumer.commitOffsets([]) // flush what autoCommit resolved
  await consumer.disconnect() // commits, then LeaveGroup
  return got
}

async function seekTo (groupId, topic, offset) {
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic] })
  let first
  const got = new Promise((resolve) => { first = resolve })
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ message }) => first(Number(message.offset)),
  })
  consumer.seek({ topic, partition: 0, offset: String(offset) })
  const found = await within(10000, 'the record after seek', got)
  await consumer.disconnect()
  return found
}

async function main () {
  const admin = kafka.admin()
  await admin.connect()
  const created = await admin.createTopics({
    topics: topics.map(([c, a]) => ({ topic: topicName(c, a), numPartitions: 1, replicationFactor: 1 })),
    waitForLeaders: true,
  })
  const produced = await produce()
  const consumed = await consumeAll('kjs-all')
  const committed = {}
  for (const t of await admin.fetchOffsets({ groupId: 'kjs-all', topics: Object.keys(produced) })) {
    committed[t.topic] = t.partitions.map((p) => [p.partition, Number(p.offset)])
  }
  const probe = topicName('gzip', -1)
  const ends = (await admin.fetchTopicOffsets(probe)).map((p) =>
    [p.partition, Number(p.low), Number(p.high)])
  const byTime = (await admin.fetchTopicOffsetsByTimestamp(probe, BASE_TS + 42 * 10 - 5)).map(
    (p) => [p.partition, Number(p.offset)])
  const afterSeek = await seekTo('kjs-seek', probe, 77)
  await admin.disconnect()
  process.stdout.write(JSON.stringify({ created, produced, consumed, committed, ends, byTime, afterSeek }))
}

main().then(() => process.exit(0), (e) => {
  console.error(e && e.stack ? e.stack : e)
  process.exit(1)
})

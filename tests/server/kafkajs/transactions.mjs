// kafkajs transactions against `kafkalog serve` (run by tests/server/test_serve_kafkajs.py).
//
//   node transactions.mjs <host:port>
//
// A transactional producer (no plugin needed) commits 4 records across the two partitions
// of topic kjs-txn, aborts 4 more (sent before the abort), commits 1, then commits the
// offsets of group kjs-txn-group with sendOffsets in a transaction; a read_committed
// group consumer (kafkajs' default) reads the topic back. Prints one JSON object.
import kafkajs from 'kafkajs'

const { Kafka, logLevel } = kafkajs
const [broker] = process.argv.slice(2)
const TOPIC = 'kjs-txn'

const kafka = new Kafka({
  clientId: 'kafkalog-kafkajs-txn',
  brokers: [broker],
  logLevel: logLevel.ERROR,
  retry: { retries: 5, initialRetryTime: 100 },
  connectionTimeout: 5000,
  requestTimeout: 10000,
})

const send = (txn, prefix, n) => txn.send({
  topic: TOPIC,
  messages: Array.from({ length: n }, (_, i) => ({ value: `${prefix}-${i}`, partition: i % 2 })),
})

async function main () {
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] })
  const producer = kafka.producer({ transactionalId: 'kjs-tx', idempotent: true,
    maxInFlightRequests: 1 })
  await producer.connect()
  let txn = await producer.transaction()
  await send(txn, 'committed', 4)
  await txn.commit()
  txn = await producer.transaction()
  await send(txn, 'aborted', 4)
  await txn.abort()
  txn = await producer.transaction()
  await send(txn, 'last', 1)
  await txn.sendOffsets({ consumerGroupId: 'kjs-txn-group',
    topics: [{ topic: TOPIC, partitions: [{ partition: 0, offset: '3' }] }] })
  await txn.commit()
  await producer.disconnect()

  const consumer = kafka.consumer({ groupId: 'kjs-txn-reader', maxWaitTimeInMs: 100 })
  await consumer.connect()
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
  const seen = []
  await new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, 15000)
    consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(message.value.toString())
        if (seen.length >= 5) { clearTimeout(timer); setTimeout(resolve, 1000) }
      },
    }).catch(reject)
  })
  await consumer.disconnect()
  const committed = await admin.fetchOffsets({ groupId: 'kjs-txn-group', topics: [TOPIC] })
  await admin.disconnect()
  console.log(JSON.stringify({ seen: seen.sort(), committed }))
}

main().catch((e) => { console.error(e); process.exit(1) })

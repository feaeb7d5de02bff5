// The client matrix's four rounds for kafkajs and @platformatic/kafka (tests/matrix/).
//   node rounds.js kafkajs|@platformatic/kafka ROUND BOOTSTRAP TOPIC GROUP
// (NODE_PATH: the folder holding node_modules; @platformatic/kafka needs Node >= 22.22).
// Prints one JSON line: {"outcome": "pass"}, or {"outcome": NAME, "message": ...} with NAME the
// error's name and, for a Kafka error, its type ("KafkaJSProtocolError(UNSUPPORTED_VERSION)");
// "n/a" for a round the client has no API for (both consume through a group only: no
// assign-consume).
'use strict'

const RECORDS = 6
const PER_PARTITION = 2 // in the group round's three partitions
const DEADLINE_MS = 60000

class Failed extends Error {
  constructor (message) {
    super(message)
    this.name = 'Failed'
  }
}

const value = (i) => `v${i}`
const key = (i) => `k${i}`
const until = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function kafkajs (round, bootstrap, topic, groupId) {
  const { Kafka, logLevel, ConfigResourceTypes } = require('kafkajs')
  const kafka = new Kafka({ clientId: 'matrix', brokers: [bootstrap], logLevel: logLevel.NOTHING })
  if (round === 'produce') {
    const producer = kafka.producer()
    await producer.connect()
    try {
      for (let i = 0; i < RECORDS; i++) {
        await producer.send({ topic, acks: -1, messages: [{ key: key(i), value: value(i), partition: 0 }] })
      }
    } finally {
      await producer.disconnect()
    }
  } else if (round === 'assign-consume') {
    return 'n/a'
  } else if (round === 'group') {
    await kafkajsGroup(kafka, topic, groupId)
  } else if (round === 'admin') {
    const admin = kafka.admin()
    await admin.connect()
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1 }], waitForLeaders: true })
      const described = await admin.fetchTopicMetadata({ topics: [topic] })
      const count = described.topics[0].partitions.length
      if (count !== 2) throw new Failed(`described ${count} partitions`)
      await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }], includeSynonyms: false })
      await admin.deleteTopics({ topics: [topic] })
    } finally {
      await admin.disconnect()
    }
  } else {
    throw new Error(`no round ${round}`)
  }
  return 'pass'
}

// Three members; each holds what its last join assigned it, read to its end when its next
// offset reaches PER_PARTITION (nothing is committed before the end: a partition moved to a
// member is read again from its start). Every member commits, then all leave.
async function kafkajsGroup (kafka, topic, groupId) {
  const read = new Set()
  const members = []
  let failure = null
  for (let i = 0; i < 3; i++) {
    const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500 })
    const member = { consumer, held: new Map() }
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      member.held = new Map((event.payload.memberAssignment[topic] || []).map((p) => [p, 0]))
    })
    consumer.on(consumer.events.CRASH, (event) => { failure = failure || event.payload.error })
    members.push(member)
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        read.add(`${partition}:${message.offset}`)
        const next = Number(message.offset) + 1
        if (member.held.has(partition) && next > member.held.get(partition)) member.held.set(partition, next)
      }
    })
  }
  const done = () => {
    const all = new Set()
    for (const { held } of members) {
      if (held.size !== 1) return false
      for (const [p, next] of held) {
        if (next < PER_PARTITION) return false
        all.add(p)
      }
    }
    return read.size >= RECORDS && all.size === 3
  }
  const deadline = Date.now() + DEADLINE_MS
  try {
    while (!done()) {
      if (failure) throw failure
      if (Date.now() > deadline) {
        throw new Failed(`read ${read.size} of ${RECORDS}; held ${JSON.stringify(members.map((m) => [...m.held]))}`)
      }
      await until(50)
    }
    for (const { consumer, held } of members) {
      await consumer.commitOffsets([...held].map(([partition, next]) => ({ topic, partition, offset: String(next) })))
    }
  } finally {
    for (const { consumer } of members) await consumer.disconnect()
  }
}

async function platformatic (round, bootstrap, topic, groupId) {
  const kafka = require('@platformatic/kafka')
  const base = { clientId: 'matrix', bootstrapBrokers: [bootstrap] }
  if (round === 'produce') {
    const producer = new kafka.Producer({ ...base, serializers: kafka.stringSerializers })
    try {
      for (let i = 0; i < RECORDS; i++) {
        await producer.send({ messages: [{ topic, key: key(i), value: value(i), partition: 0 }], acks: kafka.ProduceAcks.ALL })
      }
    } finally {
      await producer.close()
    }
  } else if (round === 'assign-consume') {
    return 'n/a'
  } else if (round === 'group') {
    await platformaticGroup(kafka, base, topic, groupId)
  } else if (round === 'admin') {
    const admin = new kafka.Admin(base)
    try {
      await admin.createTopics({ topics: [topic], partitions: 2, replicas: 1 })
      const described = await admin.metadata({ topics: [topic] })
      const count = described.topics.get(topic).partitionsCount
      if (count !== 2) throw new Failed(`described ${count} partitions`)
      await admin.describeConfigs({ resources: [{ resourceType: kafka.ConfigResourceTypes.TOPIC, resourceName: topic }] })
      await admin.deleteTopics({ topics: [topic] })
    } finally {
      await admin.close()
    }
  } else {
    throw new Error(`no round ${round}`)
  }
  return 'pass'
}

// Three members, as kafkajsGroup: each holds its consumer's current assignment, read to its end
// when the next offset it read there (in any generation: the stream keeps its position over a
// rebalance that leaves it the partition) reaches PER_PARTITION; every member commits its last
// message, then all leave.
async function platformaticGroup (kafka, base, topic, groupId) {
  const read = new Set()
  const members = []
  let failure = null
  for (let i = 0; i < 3; i++) {
    const consumer = new kafka.Consumer({ ...base, groupId, deserializers: kafka.stringDeserializers, sessionTimeout: 10000, heartbeatInterval: 500 })
    const member = { consumer, next: new Map(), last: new Map() }
    members.push(member)
    const stream = await consumer.consume({ topics: [topic], mode: kafka.MessagesStreamModes.COMMITTED, fallbackMode: kafka.MessagesStreamFallbackModes.EARLIEST, autocommit: false })
    stream.on('error', (error) => { failure = failure || error })
    stream.on('data', (message) => {
      read.add(`${message.partition}:${message.offset}`)
      member.next.set(message.partition, Number(message.offset) + 1)
      member.last.set(message.partition, message)
    })
  }
  const held = (member) => (member.consumer.assignments || []).filter((a) => a.topic === topic).flatMap((a) => a.partitions)
  const done = () => {
    const all = new Set()
    for (const member of members) {
      const partitions = held(member)
      if (partitions.length !== 1 || (member.next.get(partitions[0]) || 0) < PER_PARTITION) return false
      all.add(partitions[0])
    }
    return read.size >= RECORDS && all.size === 3
  }
  const deadline = Date.now() + DEADLINE_MS
  try {
    while (!done()) {
      if (failure) throw failure
      if (Date.now() > deadline) {
        throw new Failed(`read ${read.size} of ${RECORDS}; held ${JSON.stringify(members.map(held))}`)
      }
      await until(50)
    }
    for (const member of members) await member.last.get(held(member)[0]).commit()
  } finally {
    for (const { consumer } of members) await consumer.close(true)
  }
}

function named (error) {
  const name = error.name || error.constructor.name
  const type = error.type || (error.apiId ?? error.code)
  return type ? `${name}(${type})` : name
}

async function main () {
  const [client, round, bootstrap, topic, groupId] = process.argv.slice(2)
  const clients = { kafkajs, '@platformatic/kafka': platformatic }
  let answer
  try {
    answer = { outcome: await clients[client](round, bootstrap, topic, groupId) }
  } catch (error) {
    answer = { outcome: named(error), message: String(error.message).slice(0, 500) }
  }
  process.stdout.write(JSON.stringify(answer) + '\n')
  process.exit(0)
}

main()

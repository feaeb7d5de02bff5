// kafkajs (2.x) over TLS and SASL for fakebroker's security tests, run by tests/clients/kafkajs.py
// (run_kafkajs). One action per run, described by one JSON argument:
//
//   node secure_client.js '{"client": {...}, "action": "...", ...}'
//     client: kafkajs's client options: brokers, sasl ({mechanism, username, password}; for
//       mechanism "oauthbearer" an unsecured token for username), ssl ({ca_file, cert_file,
//       key_file}: PEM files, read here), plus retries (default 5: kafkajs's) and timeoutMs
//       (default 30000: bounds the whole action).
//     action "round-trip" (topic, group, count): a producer sends count records (values
//       v0..v<count-1>, acks=-1) and disconnects; then a group consumer (groupId group,
//       fromBeginning) runs until it has count records, commits them and disconnects.
//       -> {"partition","offset"} per ack, {"partition","offset","value"} per record consumed,
//          then {"done":records consumed}
//     action "produce" (topic): the producer sends one record.  -> {"done":1}
//     action "grant" (principal, topic, group): admin.createAcls: ALLOW principal from any host
//       WRITE, READ and DESCRIBE on the topic (literal) and READ on the group. -> {"created":n}
//
// kafkajs comes from $KAFKAJS_PATH (the kafkajs package folder). On an error: {"error": its
// name (KafkaJSSASLAuthenticationError...), "type": the broker's error type of it or of a
// cause (TOPIC_AUTHORIZATION_FAILED...) or null, "message", "causes"} and exit code 2. kafkajs logs go to
// stderr (WARN and up).
'use strict'

const fs = require('fs')

const spec = JSON.parse(process.argv[2])
const kafkajs = require(process.env.KAFKAJS_PATH)
const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = kafkajs

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n')
}

// type: the broker's error type of the error or of its first cause that has one.
function emitError(e) {
  const causes = []
  let type = (e && e.type) || null
  for (let c = e && (e.cause || e.originalError); c && causes.length < 5; c = c.cause || c.originalError) {
    causes.push(`${c.name}: ${c.message}`)
    type = type || c.type || null
  }
  emit({ error: (e && e.name) || 'Error', type, message: e && e.message, causes })
}

function unsecuredToken(subject) {
  const part = obj => Buffer.from(JSON.stringify(obj)).toString('base64url')
  return `${part({ alg: 'none' })}.${part({ sub: subject, iat: Math.floor(Date.now() / 1000) })}.`
}

function clientOptions(options) {
  const out = {
    clientId: 'fakebroker-secure-client',
    brokers: options.brokers,
    retry: { retries: options.retries === undefined ? 5 : options.retries, initialRetryTime: 100 },
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, label, log }) => {
      process.stderr.write(`${new Date().toISOString()} ${label} [${namespace}] ${JSON.stringify(log)}\n`)
    },
  }
  if (options.ssl) {
    out.ssl = {}
    if (options.ssl.ca_file) out.ssl.ca = [fs.readFileSync(options.ssl.ca_file, 'utf8')]
    if (options.ssl.cert_file) out.ssl.cert = fs.readFileSync(options.ssl.cert_file, 'utf8')
    if (options.ssl.key_file) out.ssl.key = fs.readFileSync(options.ssl.key_file, 'utf8')
  }
  if (options.sasl) {
    const { mechanism, username, password } = options.sasl
    out.sasl = mechanism === 'oauthbearer'
      ? { mechanism, oauthBearerProvider: async () => ({ value: unsecuredToken(username) }) }
      : { mechanism, username, password }
  }
  return out
}

async function produce(kafka, topic, count) {
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  try {
    const messages = Array.from({ length: count }, (_, i) => ({ value: `v${i}` }))
    const acks = await producer.send({ topic, acks: -1, messages })
    for (const ack of acks) emit({ partition: ack.partition, offset: Number(ack.baseOffset) })
  } finally {
    await producer.disconnect()
  }
}

async function consume(kafka, topic, group, count) {
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 500 })
  await consumer.connect()
  let n = 0
  try {
    await consumer.subscribe({ topic, fromBeginning: true })
    await new Promise((resolve, reject) => {
      consumer.on(consumer.events.CRASH, ({ payload }) => reject(payload.error))
      consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          emit({ partition, offset: Number(message.offset), value: message.value.toString('utf8') })
          n++
          await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }])
          if (n >= count) resolve()
        },
      }).catch(reject)
    })
  } finally {
    await consumer.disconnect()
  }
  return n
}

async function grant(kafka, principal, topic, group) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    const entry = (resourceType, resourceName, operation) => ({
      resourceType, resourceName, resourcePatternType: ResourcePatternTypes.LITERAL,
      principal, host: '*', operation, permissionType: AclPermissionTypes.ALLOW,
    })
    const acl = [AclOperationTypes.WRITE, AclOperationTypes.READ, AclOperationTypes.DESCRIBE]
      .map(op => entry(AclResourceTypes.TOPIC, topic, op))
    acl.push(entry(AclResourceTypes.GROUP, group, AclOperationTypes.READ))
    await admin.createAcls({ acl })
    return acl.length
  } finally {
    await admin.disconnect()
  }
}

async function main() {
  const kafka = new Kafka(clientOptions(spec.client))
  const timeoutMs = spec.client.timeoutMs || 30000
  const timer = setTimeout(() => {
    emitError({ name: 'Timeout', message: `${spec.action} did not finish within ${timeoutMs} ms` })
    process.exit(2)
  }, timeoutMs)
  if (spec.action === 'round-trip') {
    await produce(kafka, spec.topic, spec.count)
    emit({ done: await consume(kafka, spec.topic, spec.group, spec.count) })
  } else if (spec.action === 'produce') {
    await produce(kafka, spec.topic, 1)
    emit({ done: 1 })
  } else if (spec.action === 'grant') {
    emit({ created: await grant(kafka, spec.principal, spec.topic, spec.group) })
  } else {
    throw new Error(`unknown action: ${spec.action}`)
  }
  clearTimeout(timer)
  process.exit(0)
}

main().catch(e => {
  emitError(e)
  process.exit(2)
})

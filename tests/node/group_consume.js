// A kafkajs (2.x) group member for fakebroker's tests: the kafkajs twin of
// `Harness group-consume` (tests/java/Harness.java), run by tests/clients/kafkajs.py.
//
// Usage: node group_consume.js --bootstrap B --topic T --group G [--protocol classic]
//          [--max-records N] [--idle-exit-ms MS] [--commit sync|async|auto] [key=value ...]
//   kafkajs comes from $KAFKAJS_PATH (the kafkajs package folder), else from
//   ${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}/node/node_modules/kafkajs.
//   key=value: consumer options by kafkajs name (sessionTimeout=6000...) or by the Java
//   client's name where there is one (session.timeout.ms=6000...); clientId, connectionTimeout,
//   requestTimeout go to the client, partitionsConsumedConcurrently to run(). Numbers and
//   true/false are converted. Default maxWaitTimeInMs is 500 (the Java client's
//   fetch.max.wait.ms) instead of kafkajs's 5000, so that a member stops quickly.
//   --instance-id and --protocol consumer are refused (kafkajs 2.x has no static membership
//   and no KIP-848): an error line, exit code 2.
//
// subscribe({topic, fromBeginning: true}) and run({autoCommit: false, eachBatch}) (autoCommit
// true with --commit auto): each batch's records are printed and resolved, then their offsets
// committed: awaited commitOffsets (sync, default) or not awaited (async). Exits (disconnect():
// LeaveGroup) after printing N records, after --idle-exit-ms (default 10000) without a record
// once it has joined (the clock restarts at each join), or on a line "stop" or end of file on stdin.
//
// Output, one JSON object a line on stdout (kafkajs logs go to stderr, WARN and up):
//   {"event":"assigned","partitions":[..],"memberId","leader":bool}  on each group join
//   {"event":"revoked","partitions":[..]}  when a rebalance starts (kafkajs is eager: it drops
//       its whole assignment; no callback of its own, so this is printed on its REBALANCING
//       event, or just before the next "assigned" if it rejoined without one, or after
//       disconnect() on exit)
//   {"topic","partition","offset","timestamp","key","value","headers":[[k,v],...]} per record
//   {"event":"committed","offsets":{"<partition>":next offset}} or
//   {"event":"commit-failed","offsets":{..},"error","message"} (the member goes on)
//   {"event":"crash","error","message","restart":bool}  kafkajs's CRASH event
//   {"done":count} at the end; on an error {"error","message","class","causes"} and exit code 2.
'use strict'

const os = require('os')
const path = require('path')
const readline = require('readline')

const kafkajsPath =
  process.env.KAFKAJS_PATH ||
  path.join(
    process.env.FAKEBROKER_CLIENTS_DIR || path.join(os.homedir(), '.cache', 'fakebroker-clients'),
    'node', 'node_modules', 'kafkajs'
  )

// Java client property -> kafkajs consumer option.
const JAVA_NAMES = {
  'session.timeout.ms': 'sessionTimeout',
  'heartbeat.interval.ms': 'heartbeatInterval',
  'max.poll.interval.ms': 'rebalanceTimeout',
  'fetch.max.wait.ms': 'maxWaitTimeInMs',
  'fetch.min.bytes': 'minBytes',
  'fetch.max.bytes': 'maxBytes',
  'max.partition.fetch.bytes': 'maxBytesPerPartition',
  'isolation.level': 'isolationLevel',
  'client.id': 'clientId',
  'request.timeout.ms': 'requestTimeout',
}
const CLIENT_KEYS = new Set(['clientId', 'connectionTimeout', 'requestTimeout', 'authenticationTimeout'])
const RUN_KEYS = new Set(['partitionsConsumedConcurrently'])

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n') // synchronous for pipes and files
}

function emitError(e) {
  const causes = []
  for (let c = e && e.cause; c && causes.length < 5; c = c.cause) causes.push(`${c.name}: ${c.message}`)
  const name = (e && e.name) || 'Error'
  emit({ error: name, message: e && e.message !== undefined ? e.message : String(e), class: name, causes })
}

function usageError(message) {
  const e = new Error(message)
  e.name = 'IllegalArgumentException'
  return e
}

function parseArgs(argv) {
  const opts = {}
  const props = {}
  for (let i = 0; i < argv.length; i++) {
    const s = argv[i]
    if (s.startsWith('--')) {
      const eq = s.indexOf('=')
      if (eq >= 0) opts[s.slice(2, eq)] = s.slice(eq + 1)
      else if (i + 1 < argv.length) opts[s.slice(2)] = argv[++i]
      else throw usageError(`option ${s} needs a value`)
    } else if (s.indexOf('=') > 0) {
      const eq = s.indexOf('=')
      props[s.slice(0, eq)] = s.slice(eq + 1)
    } else {
      throw usageError(`unexpected argument: ${s} (options are --name value, props key=value)`)
    }
  }
  const allowed = ['bootstrap', 'topic', 'group', 'instance-id', 'protocol', 'max-records', 'idle-exit-ms', 'commit']
  for (const k of Object.keys(opts)) {
    if (!allowed.includes(k)) throw usageError(`unknown option --${k} (allowed: ${allowed})`)
  }
  for (const k of ['bootstrap', 'topic', 'group']) {
    if (!opts[k]) throw usageError(`missing option --${k}`)
  }
  return { opts, props }
}

function convert(key, v) {
  if (key === 'isolationLevel' && /^read_/i.test(v)) return /^read_committed$/i.test(v) ? 1 : 0
  if (v === 'true' || v === 'false') return v === 'true'
  return v !== '' && !isNaN(Number(v)) ? Number(v) : v
}

function str(buf) {
  return buf === null || buf === undefined ? null : buf.toString('utf8')
}

function headersOf(headers) {
  const out = []
  for (const [k, v] of Object.entries(headers || {})) {
    for (const one of Array.isArray(v) ? v : [v]) out.push([k, str(one)])
  }
  return out
}

async function main() {
  const { opts, props } = parseArgs(process.argv.slice(2))
  if (opts['instance-id'] !== undefined) {
    throw usageError('kafkajs 2.x has no static membership (--instance-id / group.instance.id)')
  }
  if ((opts.protocol || 'classic') !== 'classic') {
    throw usageError(`kafkajs 2.x only speaks the classic group protocol, not --protocol ${opts.protocol}`)
  }
  const mode = opts.commit || 'sync'
  if (!['sync', 'async', 'auto'].includes(mode)) throw usageError(`--commit must be sync, async or auto, got: ${mode}`)
  const maxRecords = opts['max-records'] !== undefined ? Number(opts['max-records']) : Infinity
  const idleExitMs = Number(opts['idle-exit-ms'] || 10000)

  const { Kafka, logLevel } = require(kafkajsPath)
  const clientConfig = { clientId: 'fakebroker-group-consume', brokers: opts.bootstrap.split(',') }
  const consumerConfig = { groupId: opts.group, maxWaitTimeInMs: 500 }
  const runConfig = {}
  for (const [rawKey, v] of Object.entries(props)) {
    const key = JAVA_NAMES[rawKey] || rawKey
    const target = CLIENT_KEYS.has(key) ? clientConfig : RUN_KEYS.has(key) ? runConfig : consumerConfig
    target[key] = convert(key, v)
  }
  const kafka = new Kafka({
    ...clientConfig,
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, level, label, log }) => {
      process.stderr.write(`${new Date().toISOString()} ${label} [${namespace}] ${JSON.stringify(log)}\n`)
    },
  })
  const consumer = kafka.consumer(consumerConfig)

  let count = 0
  let joined = false
  let lastActivity = Date.now()
  let owned = []
  let stopping = false
  let finished = null
  let idleTimer = null
  const pendingCommits = new Set()

  const revokeOwned = () => {
    if (owned.length) emit({ event: 'revoked', partitions: owned })
    owned = []
  }
  consumer.on(consumer.events.REBALANCING, revokeOwned)
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    revokeOwned()
    owned = [...(payload.memberAssignment[opts.topic] || [])].sort((a, b) => a - b)
    emit({ event: 'assigned', partitions: owned, memberId: payload.memberId, leader: payload.isLeader })
    joined = true
    lastActivity = Date.now()
  })
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    const e = payload.error
    emit({ event: 'crash', error: e.name, message: e.message, restart: payload.restart })
    if (!payload.restart) finish(2, e)
  })

  // Stops once: waits for async commits, disconnects (leaves the group), prints {"done"}.
  // Never awaited from eachBatch: disconnect() waits for the running batch to end.
  function finish(code = 0, error = null) {
    if (!finished) {
      stopping = true
      finished = (async () => {
        clearInterval(idleTimer)
        await Promise.allSettled([...pendingCommits])
        try {
          await consumer.disconnect()
        } catch (e) {
          error = error || e
        }
        revokeOwned() // disconnect() has left the group
        if (error) {
          emitError(error)
          code = 2
        }
        emit({ done: count })
        process.exit(code)
      })()
    }
    return finished
  }

  idleTimer = setInterval(() => {
    if (joined && Date.now() - lastActivity >= idleExitMs) finish()
  }, 100)
  const stdin = readline.createInterface({ input: process.stdin })
  stdin.on('line', line => {
    if (line.trim() === 'stop') finish()
  })
  stdin.on('close', () => finish())

  const commit = async (topic, offsets) => {
    const list = Object.entries(offsets).map(([p, o]) => ({ topic, partition: Number(p), offset: String(o) }))
    const done = consumer.commitOffsets(list).then(
      () => emit({ event: 'committed', offsets }),
      e => emit({ event: 'commit-failed', offsets, error: e.name, message: e.message })
    )
    pendingCommits.add(done)
    done.finally(() => pendingCommits.delete(done))
    if (mode === 'sync') await done
  }

  await consumer.connect()
  await consumer.subscribe({ topic: opts.topic, fromBeginning: true })
  await consumer.run({
    ...runConfig,
    autoCommit: mode === 'auto',
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, isRunning, isStale }) => {
      let next = null
      for (const m of batch.messages) {
        if (stopping || count >= maxRecords || !isRunning() || isStale()) break
        emit({
          topic: batch.topic, partition: batch.partition, offset: Number(m.offset),
          timestamp: Number(m.timestamp), key: str(m.key), value: str(m.value), headers: headersOf(m.headers),
        })
        count++
        resolveOffset(m.offset)
        next = Number(m.offset) + 1
      }
      if (next !== null) {
        lastActivity = Date.now()
        if (mode !== 'auto') await commit(batch.topic, { [batch.partition]: next })
      }
      if (count >= maxRecords) finish()
    },
  })
}

main().catch(e => {
  emitError(e)
  process.exit(2)
})

// Drives the real Apache Kafka Java client (3.9.1 and 4.4.0) for fakebroker's tests.
//
// Single file, no build tool: compiled with javac against the jars of each client version that
// .ci/install-kafka puts in ${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}/java-<version>/,
// run by tests/clients/java.py. It uses only APIs both versions have (e.g. poll(Duration);
// KafkaConsumer.close(Duration), deprecated in 4.x, as close(CloseOptions) is not in 3.9).
//
// Usage: java -cp <jars>:<harness jar or classes> Harness <subcommand> [--option value ...] [--flag] [key=value ...]
//   bare key=value arguments are client properties (e.g. compression.type=zstd, linger.ms=0);
//   --timeout-ms (default 30000) bounds the whole subcommand's waiting.
//
//   produce              --bootstrap B --topic T (--count N | --values-file F) [--partition P]
//                        [--key-prefix k] [--value-prefix v] [--headers]
//       producer at default config (idempotent, acks=all; only max.block.ms = --timeout-ms)
//       plus props; record i has key k<i>, value v<i> (--values-file: the file's line i, one
//       record per line), header h=<i> with --headers;
//       waits for all acks.
//       -> {"partition","offset","timestamp"} per record in send order, then {"done":N}
//   consume              --bootstrap B --topic T
//       consumer without a group: partitionsFor, assign all, seekToBeginning, endOffsets,
//       poll until every position >= its end offset. With isolation.level=read_committed
//       the end offsets are the last stable offsets: only committed transactions' records.
//       -> a record line per record below the end offsets, then {"done":count}
//          ({"done":count,"pastEnd":k} when k records at/after the end offsets were polled)
//   spark-read           --bootstrap B --topic T [--batches N]
//       as Spark's Kafka source, N micro-batches (default 1). Each micro-batch: the driver's Admin
//       listOffsets(earliest) and (latest) for all partitions; the batch's range per partition is
//       [start, latest) where start is the previous batch's end (the first batch: earliest);
//       then the executors' consumer (no group.id, no commits, auto.offset.reset=none, kept
//       across batches as Spark pools it): per partition assign([tp]) + seek(start) + poll
//       until the end offset. Between micro-batches it waits for a line "next" on stdin (the
//       test produces more records meanwhile); end of file ends it early.
//       -> per batch: {"batch","partition","earliest","latest","start","end"} per partition,
//          record lines in [start, end), {"batch","records":n}; then {"done":count} (with
//          "pastEnd" as for consume)
//   admin-create-topic   --bootstrap B --topic T --partitions P --replication R [--config k=v ...]
//       (P or R = -1: broker default) -> {"created","topicId","partitions","replication"}
//   admin-describe-topic --bootstrap B --topic T [--partition-limit N] (N: partitions per
//       DescribeTopicPartitions answer, 4.x)
//       -> {"topic","topicId","internal","partitions":[{"partition","leader","replicas","isr"}]}
//   admin-list-offsets   --bootstrap B --topic T --spec earliest|latest|max-timestamp|
//                        earliest-local|latest-tiered|<timestamp ms> [--partition P]
//                        [--isolation read_committed|read_uncommitted]
//       -> {"partition","offset","timestamp","leaderEpoch"} per partition
//   admin-describe-configs --bootstrap B (--topic T | --broker ID)
//       -> {"name","value","source","isDefault","readOnly","sensitive"} per entry, then {"done":n}
//   admin-delete-records --bootstrap B --topic T --partition P --before OFFSET
//       -> {"partition","lowWatermark"}
//   admin-reassign       --bootstrap B --topic T --partition P --replicas ID,ID...|cancel
//       alterPartitionReassignments (cancel: Optional.empty()), then listPartitionReassignments
//       -> {"error" (the exception's simple name, or null),"reassigning":[{"topic","partition",
//          "replicas","adding","removing"}]}
//   admin-describe-cluster --bootstrap B
//       -> {"clusterId","controller","nodes":[{"id","host","port","rack"}]}
//   admin-delete-topic   --bootstrap B --topic T -> {"deleted":T}
//   admin-describe-log-dirs --bootstrap B --broker ID ... -> per broker and directory
//       {"broker","dir","error","totalBytes","usableBytes","replicas":{"topic-partition":size}}
//   admin-describe-quorum --bootstrap B -> {"leader","epoch","highWatermark","voters":[ids],
//       "observers":[ids],"nodes":[ids]} (nodes: 4.x clients; [] before)
//   admin-list-topics    --bootstrap B [--internal] -> {"topics":[...]}
//   admin-create-delegation-token --bootstrap B [--owner TYPE:NAME] [--renewer TYPE:NAME ...]
//       createDelegationToken (as Spark's Kafka token provider asks: default options unless
//       given) -> {"tokenId","hmac" (base64: the token's SCRAM password),"owner",
//       "tokenRequester","renewers":[..],"issueTimestamp","expiryTimestamp","maxTimestamp"}
//   admin-describe-delegation-tokens --bootstrap B -> one such line per token (no "hmac"),
//       then {"done":n}
//   group-consume        --bootstrap B (--topic T | --pattern REGEX) --group G [--instance-id I]
//                        [--protocol classic|consumer] [--max-records N] [--idle-exit-ms MS]
//                        [--commit sync|async|auto] [--report-positions]
//       a group member: group.id=G, group.protocol (default classic), group.instance.id=I (static
//       member), auto.offset.reset=earliest, enable.auto.commit only with --commit auto (these are
//       defaults: bare props win); subscribe([T]) or subscribe(Pattern.compile(REGEX)) and poll
//       (the 3.9 client matches a Pattern itself against the topics of its metadata, refreshed
//       every metadata.max.age.ms, with either group.protocol). After each poll it commits the offsets
//       of the records it printed: commitSync (default) or commitAsync. Exits (close(): a dynamic
//       member leaves the group, a static one does not send LeaveGroup) after printing N records,
//       after --idle-exit-ms (default 10000) without a record once it has had an assignment (the
//       clock restarts at each assignment), or on a line "stop" or end of file on stdin.
//       -> rebalance listener: {"event":"assigned"|"revoked"|"lost","partitions":[..],
//          "generation","memberId"} (partitions: what that callback got: all of them with eager
//          classic assignors, the change with cooperative ones and group.protocol=consumer);
//          a record line per record; {"event":"committed","offsets":{"<partition>":next offset}}
//          or {"event":"commit-failed","offsets":{..},"error","message"} (the member goes on:
//          the partitions' next owner reads those records again); then {"done":count}.
//          With --report-positions, after each assigned callback, once every partition it owns
//          has a fetch position (its committed offset, or auto.offset.reset's): {"event":
//          "positioned","positions":{"<partition>":offset}} (checked after each poll).
//   first-record         --bootstrap B --topic T [--rounds N] [--protocol classic|consumer]
//                        [--group-prefix P]
//       time to first record, cold then warm: in this one JVM, N (default 5) group consumers one
//       after another, each with a new group id P-<round> (P defaults to first-record-<pid>), at
//       client defaults except group.protocol and auto.offset.reset=earliest (bare props win);
//       each subscribes to T (which must already hold records), polls until its first record
//       and closes. Round 0 is cold (class loading, interpreted code), later rounds are warm.
//       -> per round, a stable format (times in ms, 0.1 ms resolution):
//          {"round":r,"group":"P-r","cold":true|false,"createMs":new KafkaConsumer(),
//           "firstRecordMs":subscribe() to the return of the poll() with the first record}
//          (subscribe([T]) without a rebalance listener; poll(100 ms) in a loop)
//          then {"done":N}
//   txn-produce          --bootstrap B --topic T --txn-id ID --plan PLAN [--partition P]
//                        [--value-prefix v]
//       a transactional producer (transactional.id=ID, acks=all, idempotent; only max.block.ms =
//       --timeout-ms; props such as transaction.timeout.ms win): initTransactions, then one
//       transaction per PLAN item, e.g. commit:5,abort:3,open:2. Item k sends its n records
//       (key k<i>, value v<i>, i counting across the whole plan), flush()es, then
//       commitTransaction (commit), abortTransaction (abort), or neither (open: the last item:
//       the JVM then halts with the transaction left open, as a crashed producer).
//       -> per record once acked: {"txn":k,"partition","offset","value"}; per transaction {"txn":k,"outcome":
//          "committed"|"aborted"|"open"}; then {"done":records} or, after open, {"halted":k}
//   txn-copy             --bootstrap B --input IN --output OUT --group G --txn-id ID
//                        [--instance-id I] [--crash-after N] [--pause-after N [--pause-at send|offsets]]
//       consume-transform-produce, exactly once: a read_committed group member (group.id=G,
//       group.instance.id=I: a static member, replaced at once by its restart; no auto-commit,
//       auto.offset.reset=earliest) and a transactional producer (transactional.id=ID). After
//       initTransactions and subscribe([IN]), per non-empty poll: beginTransaction, send each
//       record to OUT with its key and its value upper-cased, flush() (so that a failed send's
//       error is the one the next call reports), sendOffsetsToTransaction(next offsets,
//       consumer.groupMetadata()), commitTransaction. Ends once every assigned partition's
//       position has reached its end offset (the read_committed end: the LSO).
//       --crash-after N: after the N-th record sent (counting from this start), flush() and
//       halt the JVM: no commit, no abort, no close. --pause-after N: flush() and wait for a
//       line on stdin (a successor with the same ID can fence this one meanwhile), then go on
//       as usual; where: --pause-at send (the default): right after the N-th record sent, so
//       that it wakes to send the rest of that poll's records; --pause-at offsets: after the
//       whole poll holding the N-th record was sent, so that it wakes to
//       sendOffsetsToTransaction. Bare props go to the producer and the consumer (each takes
//       the ones it knows).
//       -> {"event":"initialized"}; the rebalance events as group-consume's; per transaction
//          {"event":"committed","records":n,"offsets":{"<partition>":next offset}};
//          {"event":"paused","sent":n} / {"event":"resumed"}; {"halted":n} (crash-after: n sent);
//          when sendOffsetsToTransaction or commitTransaction throws (e.g. fenced):
//          {"event":"failed","step":"sendOffsetsToTransaction"|"commitTransaction","error":..},
//          then, unless that error is fatal (ProducerFencedException, OutOfOrderSequenceException,
//          an AuthorizationException), abortTransaction() as the producer's docs say:
//          {"event":"aborted"} or {"event":"abort-failed","error":..}; then the first error's
//          error line (exit code 2);
//          then {"done":records copied and committed}
//   admin-create-topics  --bootstrap B --call NAME:PARTITIONS[,NAME:PARTITIONS ...] [--call ...]
//                        [--no-quota-retry]
//       one Admin (bare props: client.id...), one createTopics per --call, in order, each
//       waiting for every topic's result; replication factor 1. --no-quota-retry:
//       CreateTopicsOptions.retryOnQuotaViolation(false) (the Admin retries a topic refused with
//       THROTTLING_QUOTA_EXCEEDED by default, after the answer's throttle time)
//       -> per call {"ms":<its time>,"created":[names],"failed":{"<name>":{"error":<exception's
//          simple name>,"message","throttleTimeMs":<a ThrottlingQuotaExceededException's, else
//          null>}}}
//   admin-describe-features --bootstrap B
//       -> {"finalized":{"<feature>":max level},"supported":{"<feature>":[min,max]}}
//   admin-update-features --bootstrap B --feature NAME=LEVEL [--feature ...] [--downgrade]
//       updateFeatures: each to LEVEL (UPGRADE, or SAFE_DOWNGRADE with --downgrade)
//       -> {"updated":{"<feature>":level}}
//   admin-alter-client-quotas --bootstrap B --entity TYPE=NAME [--entity ...] [--set KEY=VALUE ...]
//                        [--remove KEY ...] [--validate-only]
//       alterClientQuotas for one entity (NAME <default>: the type's default entity)
//       -> {"altered":{"<type>":name or null}}
//   admin-describe-client-quotas --bootstrap B [--match TYPE=NAME | TYPE ...] [--strict]
//       describeClientQuotas: TYPE=NAME exact (NAME <default>: the default entity), TYPE any
//       -> {"entries":[{"entity":{"<type>":name or null},"values":{"<key>":value}}]}, sorted
//   txn-session          --bootstrap B --transactional-id ID
//       a transactional producer (transactional.id=ID; bare props win), driven by lines on stdin:
//       "begin", "send T START COUNT" (values v<START>.., waits for every ack), "commit",
//       "abort"; initTransactions first. "stop" or end of file closes it.
//       -> {"ok":"init"|<command>} after each, or {"failed":<command>,"error":<exception's
//          simple name>,"fatal":<not a RetriableException>,"message"}
//   round-trip           --bootstrap B --topic T --group G --count N [--value-prefix v]
//       in one JVM: the default producer (as produce, max.block.ms = --timeout-ms) sends N records
//       (values v<i>, no key), waits for every ack and closes; then a group member (group.id=G,
//       auto.offset.reset=earliest, no auto-commit) subscribes to T and polls until it has N
//       records (or the deadline), commits them (commitSync) and closes. Bare props (security
//       settings...) go to both. Security tests use it: one JVM start per connection.
//       -> {"partition","offset"} per ack, a record line per record, then {"done":records}
//   admin-create-acls    --bootstrap B --principal P --topic T [--group G]
//       createAcls: ALLOW P from any host WRITE, READ and DESCRIBE on topic T (literal), and
//       READ on group G -> {"created":n}
//   warmup               (no broker) loads the client classes, for a CDS archive: {"loaded":n}
//
// A record line: {"topic","partition","offset","timestamp","timestampType","leaderEpoch",
//                 "key","value","headers":[[k,v],...]}; keys, values and header values are
// UTF-8 strings (invalid bytes become U+FFFD) or null.
// On any exception: {"error":"<exception class simple name>","message":...,"class":<full name>,
// "causes":["Class: message",...]} on stdout and exit code 2 (ExecutionException unwrapped).
// Admin calls time out after --timeout-ms through the Admin's own default.api.timeout.ms.
// Client logs (slf4j-simple) go to stderr at WARN unless -Dorg.slf4j.simpleLogger.defaultLogLevel=...
// (or -Dorg.slf4j.simpleLogger.log.<logger>=debug) is given.

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.AppConfigurationEntry;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterClientQuotasOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.SupportedVersionRange;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerToken;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerTokenCallback;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class Harness {
    private static final PrintStream OUT =
            new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    private static int pastEnd = 0;

    public static void main(String[] argv) {
        // Before any Kafka class logs: quiet by default, logs on stderr, overridable with -D.
        setDefaultProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        setDefaultProperty("org.slf4j.simpleLogger.logFile", "System.err");
        setDefaultProperty("org.slf4j.simpleLogger.showDateTime", "true");
        setDefaultProperty("org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS");
        int code = 0;
        try {
            if (argv.length == 0) {
                throw new IllegalArgumentException("usage: Harness <subcommand> [--option value ...] [key=value ...]");
            }
            Args a = Args.parse(Arrays.copyOfRange(argv, 1, argv.length));
            switch (argv[0]) {
                case "produce": produce(a); break;
                case "consume": consume(a); break;
                case "spark-read": sparkRead(a); break;
                case "group-consume": groupConsume(a); break;
                case "first-record": firstRecord(a); break;
                case "admin-create-topic": adminCreateTopic(a); break;
                case "admin-create-topics": adminCreateTopics(a); break;
                case "admin-describe-topic": adminDescribeTopic(a); break;
                case "admin-list-offsets": adminListOffsets(a); break;
                case "admin-describe-configs": adminDescribeConfigs(a); break;
                case "admin-delete-records": adminDeleteRecords(a); break;
                case "admin-reassign": adminReassign(a); break;
                case "admin-describe-cluster": adminDescribeCluster(a); break;
                case "admin-delete-topic": adminDeleteTopic(a); break;
                case "admin-describe-log-dirs": adminDescribeLogDirs(a); break;
                case "admin-describe-quorum": adminDescribeQuorum(a); break;
                case "admin-list-topics": adminListTopics(a); break;
                case "admin-create-acls": adminCreateAcls(a); break;
                case "round-trip": roundTrip(a); break;
                case "admin-describe-features": adminDescribeFeatures(a); break;
                case "admin-update-features": adminUpdateFeatures(a); break;
                case "admin-alter-client-quotas": adminAlterClientQuotas(a); break;
                case "admin-describe-client-quotas": adminDescribeClientQuotas(a); break;
                case "txn-produce": txnProduce(a); break;
                case "txn-copy": txnCopy(a); break;
                case "txn-session": txnSession(a); break;
                case "warmup": warmup(a); break;
                case "admin-create-delegation-token": adminCreateDelegationToken(a); break;
                case "admin-describe-delegation-tokens": adminDescribeDelegationTokens(a); break;
                default: throw new IllegalArgumentException("unknown subcommand: " + argv[0]);
            }
        } catch (Throwable t) {
            Throwable e = unwrap(t);
            List<String> causes = new ArrayList<>();
            for (Throwable c = e.getCause(); c != null && causes.size() < 5; c = c.getCause()) {
                causes.add(c.getClass().getSimpleName() + ": " + c.getMessage());
            }
            emit(obj("error", e.getClass().getSimpleName(), "message", e.getMessage(),
                    "class", e.getClass().getName(), "causes", causes));
            code = 2;
        }
        OUT.flush();
        // Exit explicitly: a client thread left behind by a failed close must not keep the JVM up.
        System.exit(code);
    }

    // ------------------------------------------------------------------ subcommands

    static void produce(Args a) throws Exception {
        a.allow("bootstrap", "topic", "count", "partition", "key-prefix", "value-prefix", "headers", "values-file",
                "timeout-ms");
        String topic = a.req("topic");
        List<String> valuesFile = a.has("values-file")
                ? java.nio.file.Files.readAllLines(java.nio.file.Path.of(a.req("values-file")), StandardCharsets.UTF_8)
                : null;
        int count = valuesFile != null ? valuesFile.size() : Integer.parseInt(a.req("count"));
        Integer partition = a.has("partition") ? Integer.valueOf(a.req("partition")) : null;
        String keyPrefix = a.get("key-prefix", "k");
        String valuePrefix = a.get("value-prefix", "v");
        boolean headers = a.flag("headers");
        Deadline deadline = a.deadline();

        Properties p = new Properties();
        // Not a protocol setting: only bounds how long send() blocks for metadata (default 60 s).
        p.setProperty(ProducerConfig.MAX_BLOCK_MS_CONFIG, String.valueOf(a.timeoutMs()));
        p.putAll(a.clientProps()); // given props win
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (Closer<KafkaProducer<byte[], byte[]>> c = new Closer<>(new KafkaProducer<>(p), CLOSE_TIMEOUT)) {
            KafkaProducer<byte[], byte[]> producer = c.client;
            List<Future<RecordMetadata>> futures = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                List<Header> hs = new ArrayList<>();
                if (headers) {
                    hs.add(new RecordHeader("h", utf8(String.valueOf(i))));
                }
                String value = valuesFile != null ? valuesFile.get(i) : valuePrefix + i;
                futures.add(producer.send(new ProducerRecord<>(topic, partition, null,
                        utf8(keyPrefix + i), utf8(value), hs)));
            }
            // No flush(): it has no timeout; linger.ms (5 ms by default) sends the batches anyway.
            for (Future<RecordMetadata> f : futures) {
                RecordMetadata md;
                try {
                    md = f.get(deadline.remainingMs(), TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    throw new TimeoutException("no ack for every record within --timeout-ms=" + deadline.timeoutMs);
                }
                emit(obj("partition", md.partition(), "offset", md.offset(), "timestamp", md.timestamp()));
            }
            emit(obj("done", count));
        }
    }

    static void roundTrip(Args a) throws Exception {
        a.allow("bootstrap", "topic", "group", "count", "value-prefix", "timeout-ms");
        String topic = a.req("topic");
        int count = Integer.parseInt(a.req("count"));
        String valuePrefix = a.get("value-prefix", "v");
        Deadline deadline = a.deadline();
        Properties p = new Properties();
        p.setProperty(ProducerConfig.MAX_BLOCK_MS_CONFIG, String.valueOf(a.timeoutMs()));
        p.putAll(only(a.clientProps(), ProducerConfig.configNames())); // given props win
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (Closer<KafkaProducer<byte[], byte[]>> c = new Closer<>(new KafkaProducer<>(p), CLOSE_TIMEOUT)) {
            List<Future<RecordMetadata>> futures = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                futures.add(c.client.send(new ProducerRecord<>(topic, utf8(valuePrefix + i))));
            }
            for (Future<RecordMetadata> f : futures) {
                RecordMetadata md;
                try {
                    md = f.get(deadline.remainingMs(), TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    throw new TimeoutException("no ack for every record within --timeout-ms=" + deadline.timeoutMs);
                }
                emit(obj("partition", md.partition(), "offset", md.offset()));
            }
        }
        Map<String, String> defaults = Map.of(
                ConsumerConfig.GROUP_ID_CONFIG, a.req("group"),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        int n = 0;
        try (Closer<KafkaConsumer<byte[], byte[]>> c = new Closer<>(newConsumer(a, defaults, true), CLOSE_TIMEOUT)) {
            KafkaConsumer<byte[], byte[]> consumer = c.client;
            consumer.subscribe(List.of(topic));
            while (n < count && deadline.remainingMs() > 0) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(
                        Math.min(200, Math.max(1, deadline.remainingMs()))))) {
                    emitRecord(r);
                    n++;
                }
            }
            if (n < count) {
                throw new TimeoutException(n + " of " + count + " records within --timeout-ms=" + deadline.timeoutMs);
            }
            consumer.commitSync(deadline.remaining());
        }
        emit(obj("done", n));
    }

    static void adminCreateAcls(Args a) throws Exception {
        a.allow("bootstrap", "principal", "topic", "group", "timeout-ms");
        String principal = a.req("principal");
        Deadline deadline = a.deadline();
        List<AclBinding> acls = new ArrayList<>();
        ResourcePattern topic = new ResourcePattern(ResourceType.TOPIC, a.req("topic"), PatternType.LITERAL);
        for (AclOperation op : List.of(AclOperation.WRITE, AclOperation.READ, AclOperation.DESCRIBE)) {
            acls.add(new AclBinding(topic, new AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW)));
        }
        if (a.has("group")) {
            acls.add(new AclBinding(new ResourcePattern(ResourceType.GROUP, a.req("group"), PatternType.LITERAL),
                    new AccessControlEntry(principal, "*", AclOperation.READ, AclPermissionType.ALLOW)));
        }
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            get(c.client.createAcls(acls).all(), deadline);
            emit(obj("created", acls.size()));
        }
    }

    /**
     * An OAUTHBEARER login callback handler giving an unsecured token (subject "fakebroker"):
     * for tests of a broker that refuses the mechanism. The client's own unsecured handler
     * needs jackson, which the harness's class path does not have. Use with
     * sasl.login.callback.handler.class=Harness$UnsecuredToken.
     */
    public static final class UnsecuredToken implements AuthenticateCallbackHandler {
        @Override
        public void configure(Map<String, ?> configs, String mechanism, List<AppConfigurationEntry> entries) {
        }

        @Override
        public void close() {
        }

        @Override
        public void handle(Callback[] callbacks) throws UnsupportedCallbackException {
            long now = System.currentTimeMillis();
            for (Callback callback : callbacks) {
                if (!(callback instanceof OAuthBearerTokenCallback)) {
                    throw new UnsupportedCallbackException(callback);
                }
                ((OAuthBearerTokenCallback) callback).token(new OAuthBearerToken() {
                    public String value() {
                        return "eyJhbGciOiJub25lIn0.eyJzdWIiOiJmYWtlYnJva2VyIn0.";
                    }

                    public Set<String> scope() {
                        return Set.of();
                    }

                    public long lifetimeMs() {
                        return now + 3_600_000L;
                    }

                    public String principalName() {
                        return "fakebroker";
                    }

                    public Long startTimeMs() {
                        return now;
                    }
                });
            }
        }
    }

    static void txnSession(Args a) throws Exception {
        a.allow("bootstrap", "transactional-id", "timeout-ms");
        Properties p = new Properties();
        p.setProperty(ProducerConfig.MAX_BLOCK_MS_CONFIG, String.valueOf(a.timeoutMs()));
        p.setProperty(ProducerConfig.TRANSACTIONAL_ID_CONFIG, a.req("transactional-id"));
        p.putAll(a.clientProps()); // given props win
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (Closer<KafkaProducer<byte[], byte[]>> c = new Closer<>(new KafkaProducer<>(p), CLOSE_TIMEOUT)) {
            KafkaProducer<byte[], byte[]> producer = c.client;
            String command = "init";
            String line = null;
            do {
                try {
                    String[] words = command.split(" ");
                    switch (words[0]) {
                        case "init": producer.initTransactions(); break;
                        case "begin": producer.beginTransaction(); break;
                        case "commit": producer.commitTransaction(); break;
                        case "abort": producer.abortTransaction(); break;
                        case "send": {
                            int start = Integer.parseInt(words[2]);
                            int count = Integer.parseInt(words[3]);
                            List<Future<RecordMetadata>> futures = new ArrayList<>(count);
                            for (int i = start; i < start + count; i++) {
                                futures.add(producer.send(new ProducerRecord<>(words[1], utf8("v" + i))));
                            }
                            for (Future<RecordMetadata> f : futures) {
                                f.get(a.timeoutMs(), TimeUnit.MILLISECONDS);
                            }
                            break;
                        }
                        default: throw new IllegalArgumentException("unknown command: " + command);
                    }
                    emit(obj("ok", words[0]));
                } catch (IllegalArgumentException e) {
                    throw e;
                } catch (Exception e) {
                    Throwable cause = unwrap(e);
                    emit(obj("failed", command.split(" ")[0], "error", cause.getClass().getSimpleName(),
                            "fatal", !(cause instanceof org.apache.kafka.common.errors.RetriableException),
                            "message", String.valueOf(cause.getMessage())));
                }
                OUT.flush();
                line = stdin.readLine();
                command = line == null || line.trim().equals("stop") ? null : line.trim();
            } while (command != null);
        }
    }

    static void consume(Args a) throws Exception {
        a.allow("bootstrap", "topic", "timeout-ms");
        String topic = a.req("topic");
        Deadline deadline = a.deadline();
        try (Closer<KafkaConsumer<byte[], byte[]>> c = new Closer<>(newConsumer(a, Map.of()), CLOSE_TIMEOUT)) {
            KafkaConsumer<byte[], byte[]> consumer = c.client;
            List<PartitionInfo> infos = consumer.partitionsFor(topic, deadline.remaining());
            if (infos == null || infos.isEmpty()) {
                throw new UnknownTopicOrPartitionException("topic " + topic + " has no partitions");
            }
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo info : infos) {
                tps.add(new TopicPartition(topic, info.partition()));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps, deadline.remaining());
            int n = pollUntil(consumer, end, deadline);
            emitDone(n);
        }
    }

    static void sparkRead(Args a) throws Exception {
        a.allow("bootstrap", "topic", "batches", "timeout-ms");
        String topic = a.req("topic");
        int batches = Integer.parseInt(a.get("batches", "1"));
        Deadline deadline = a.deadline();
        IsolationLevel isolation = IsolationLevel.valueOf(
                a.props.getProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted").toUpperCase());
        ListOffsetsOptions opts = new ListOffsetsOptions(isolation);
        // Spark's executors: one partition at a time, assign + seek, no group, no commits, no reset.
        Map<String, String> sparkProps = Map.of(
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Map<TopicPartition, Long> next = new LinkedHashMap<>(); // the previous batch's end offsets
        int n = 0;
        try (Closer<Admin> ca = new Closer<>(newAdmin(a), CLOSE_TIMEOUT);
             Closer<KafkaConsumer<byte[], byte[]>> cc = new Closer<>(newConsumer(a, sparkProps), CLOSE_TIMEOUT)) {
            Admin admin = ca.client;
            KafkaConsumer<byte[], byte[]> consumer = cc.client;
            for (int batch = 0; batch < batches; batch++) {
                if (batch > 0) {
                    String line = stdin.readLine();
                    if (line == null) {
                        break;
                    }
                }
                // The driver: the partitions and their earliest and latest offsets, per micro-batch.
                List<TopicPartition> tps = partitionsOf(admin, topic, deadline);
                Map<TopicPartition, OffsetSpec> earliestSpec = new LinkedHashMap<>();
                Map<TopicPartition, OffsetSpec> latestSpec = new LinkedHashMap<>();
                for (TopicPartition tp : tps) {
                    earliestSpec.put(tp, OffsetSpec.earliest());
                    latestSpec.put(tp, OffsetSpec.latest());
                }
                Map<TopicPartition, ListOffsetsResultInfo> e =
                        get(admin.listOffsets(earliestSpec, opts).all(), deadline);
                Map<TopicPartition, ListOffsetsResultInfo> l =
                        get(admin.listOffsets(latestSpec, opts).all(), deadline);
                Map<TopicPartition, long[]> ranges = new LinkedHashMap<>();
                for (TopicPartition tp : tps) {
                    long earliest = e.get(tp).offset();
                    long latest = l.get(tp).offset();
                    long start = next.getOrDefault(tp, earliest);
                    ranges.put(tp, new long[] {start, latest});
                    next.put(tp, latest);
                    emit(obj("batch", batch, "partition", tp.partition(), "earliest", earliest,
                            "latest", latest, "start", start, "end", latest));
                }
                // The executors: each partition's range read alone with the pooled consumer.
                int inBatch = 0;
                for (Map.Entry<TopicPartition, long[]> r : ranges.entrySet()) {
                    long start = r.getValue()[0];
                    long end = r.getValue()[1];
                    if (start >= end) {
                        continue;
                    }
                    consumer.assign(List.of(r.getKey()));
                    consumer.seek(r.getKey(), start);
                    inBatch += pollUntil(consumer, Map.of(r.getKey(), end), deadline);
                }
                n += inBatch;
                emit(obj("batch", batch, "records", inBatch));
            }
        }
        emitDone(n);
    }

    static void groupConsume(Args a) throws Exception {
        a.allow("bootstrap", "topic", "pattern", "group", "instance-id", "protocol", "max-records", "idle-exit-ms",
                "commit", "report-positions");
        if (a.has("topic") == a.has("pattern")) {
            throw new IllegalArgumentException("give one of --topic and --pattern");
        }
        long maxRecords = Long.parseLong(a.get("max-records", String.valueOf(Long.MAX_VALUE)));
        long idleExitNs = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(a.get("idle-exit-ms", "10000")));
        String commit = a.get("commit", "sync");
        if (!Set.of("sync", "async", "auto").contains(commit)) {
            throw new IllegalArgumentException("--commit must be sync, async or auto, got: " + commit);
        }
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put(ConsumerConfig.GROUP_ID_CONFIG, a.req("group"));
        defaults.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, a.get("protocol", "classic"));
        if (a.has("instance-id")) {
            defaults.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, a.req("instance-id"));
        }
        defaults.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        defaults.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, String.valueOf(commit.equals("auto")));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong lastActivity = new AtomicLong(); // nanoTime of the last assignment or record
        boolean[] assigned = {false};
        boolean reportPositions = a.flag("report-positions");
        boolean[] positioned = {true}; // the positions after the latest assigned callback were printed
        long n = 0;
        try (Closer<KafkaConsumer<byte[], byte[]>> c = new Closer<>(newConsumer(a, defaults), CLOSE_TIMEOUT)) {
            KafkaConsumer<byte[], byte[]> consumer = c.client;
            stopOnStdin(consumer, stop);
            emit(obj("event", "subscribed")); // the start of "time to first record"
            ConsumerRebalanceListener listener = printingListener(consumer, () -> {
                assigned[0] = true;
                positioned[0] = !reportPositions;
                lastActivity.set(System.nanoTime());
            });
            if (a.has("pattern")) {
                consumer.subscribe(Pattern.compile(a.req("pattern")), listener);
            } else {
                consumer.subscribe(List.of(a.req("topic")), listener);
            }
            while (!stop.get() && n < maxRecords
                    && !(assigned[0] && System.nanoTime() - lastActivity.get() >= idleExitNs)) {
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(Duration.ofMillis(100));
                } catch (WakeupException e) {
                    break; // "stop" on stdin
                }
                Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    if (n >= maxRecords) {
                        break;
                    }
                    emitRecord(r);
                    n++;
                    offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                if (!records.isEmpty()) {
                    lastActivity.set(System.nanoTime());
                    rewindToUnprinted(consumer, records, offsets);
                    commit(consumer, commit, offsets);
                }
                if (!positioned[0]) {
                    try {
                        positioned[0] = emitPositionsIfKnown(consumer);
                    } catch (WakeupException e) {
                        break; // "stop" on stdin
                    }
                }
            }
        }
        emit(obj("done", n));
    }

    /**
     * Prints {"event":"positioned","positions":{..}} if every assigned partition has a fetch
     * position; returns whether it did. A partition without one times out at once (the
     * consumer's own poll() would fetch its committed offset anyway).
     */
    static boolean emitPositionsIfKnown(KafkaConsumer<?, ?> consumer) {
        Map<String, Object> positions = new TreeMap<>();
        for (TopicPartition tp : consumer.assignment()) {
            try {
                positions.put(String.valueOf(tp.partition()), consumer.position(tp, Duration.ZERO));
            } catch (TimeoutException e) {
                return false;
            }
        }
        emit(obj("event", "positioned", "positions", positions));
        return true;
    }

    static void firstRecord(Args a) throws Exception {
        a.allow("bootstrap", "topic", "rounds", "protocol", "group-prefix", "timeout-ms");
        String topic = a.req("topic");
        int rounds = Integer.parseInt(a.get("rounds", "5"));
        String prefix = a.get("group-prefix", "first-record-" + ProcessHandle.current().pid());
        for (int round = 0; round < rounds; round++) {
            String group = prefix + "-" + round;
            Map<String, String> defaults = new LinkedHashMap<>();
            defaults.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            defaults.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, a.get("protocol", "classic"));
            defaults.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"); // records are there already
            Deadline deadline = a.deadline();
            long start = System.nanoTime();
            try (Closer<KafkaConsumer<byte[], byte[]>> c = new Closer<>(newConsumer(a, defaults), CLOSE_TIMEOUT)) {
                KafkaConsumer<byte[], byte[]> consumer = c.client;
                long subscribed = System.nanoTime();
                consumer.subscribe(List.of(topic)); // no rebalance listener: the client's default path
                long first = 0;
                while (first == 0) {
                    if (deadline.remainingMs() <= 0) {
                        throw new TimeoutException("round " + round + ": no record within --timeout-ms="
                                + deadline.timeoutMs);
                    }
                    if (!consumer.poll(Duration.ofMillis(100)).isEmpty()) {
                        first = System.nanoTime();
                    }
                }
                emit(obj("round", round, "group", group, "cold", round == 0,
                        "createMs", millis(subscribed - start), "firstRecordMs", millis(first - subscribed)));
            }
        }
        emit(obj("done", rounds));
    }

    /** Nanoseconds as milliseconds with one decimal. */
    static double millis(long nanos) {
        return Math.round(nanos / 100_000.0) / 10.0;
    }

    static void adminCreateTopic(Args a) throws Exception {
        a.allow("bootstrap", "topic", "partitions", "replication", "config", "timeout-ms");
        String topic = a.req("topic");
        int partitions = Integer.parseInt(a.get("partitions", "1"));
        short replication = Short.parseShort(a.get("replication", "1"));
        Map<String, String> configs = new LinkedHashMap<>();
        for (String kv : a.all("config")) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--config expects key=value, got: " + kv);
            }
            configs.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        Deadline deadline = a.deadline();
        NewTopic nt = new NewTopic(topic,
                partitions < 0 ? Optional.empty() : Optional.of(partitions),
                replication < 0 ? Optional.empty() : Optional.of(replication)).configs(configs);
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            CreateTopicsResult r = c.client.createTopics(List.of(nt));
            get(r.all(), deadline);
            emit(obj("created", topic,
                    "topicId", orNull(r.topicId(topic), deadline),
                    "partitions", orNull(r.numPartitions(topic), deadline),
                    "replication", orNull(r.replicationFactor(topic), deadline)));
        }
    }

    static void adminCreateTopics(Args a) throws Exception {
        a.allow("bootstrap", "call", "no-quota-retry", "timeout-ms");
        Deadline deadline = a.deadline();
        org.apache.kafka.clients.admin.CreateTopicsOptions options =
                new org.apache.kafka.clients.admin.CreateTopicsOptions()
                        .retryOnQuotaViolation(!a.flag("no-quota-retry"));
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            for (String call : a.all("call")) {
                List<NewTopic> topics = new ArrayList<>();
                for (String spec : call.split(",")) {
                    String[] parts = spec.split(":");
                    topics.add(new NewTopic(parts[0], Integer.parseInt(parts[1]), (short) 1));
                }
                long started = System.nanoTime();
                CreateTopicsResult r = c.client.createTopics(topics, options);
                List<Object> created = new ArrayList<>();
                Map<String, Object> failed = new TreeMap<>();
                for (NewTopic t : topics) {
                    try {
                        get(r.values().get(t.name()), deadline);
                        created.add(t.name());
                    } catch (ExecutionException e) {
                        Throwable cause = e.getCause();
                        Integer throttle = cause instanceof org.apache.kafka.common.errors.ThrottlingQuotaExceededException
                                ? ((org.apache.kafka.common.errors.ThrottlingQuotaExceededException) cause).throttleTimeMs()
                                : null;
                        failed.put(t.name(), obj("error", cause.getClass().getSimpleName(),
                                "message", cause.getMessage(), "throttleTimeMs", throttle));
                    }
                }
                emit(obj("ms", (System.nanoTime() - started) / 1_000_000, "created", created,
                        "failed", failed));
            }
        }
    }

    static void adminDescribeTopic(Args a) throws Exception {
        a.allow("bootstrap", "topic", "partition-limit", "timeout-ms");
        String topic = a.req("topic");
        Deadline deadline = a.deadline();
        org.apache.kafka.clients.admin.DescribeTopicsOptions options =
                new org.apache.kafka.clients.admin.DescribeTopicsOptions();
        if (a.has("partition-limit")) {
            options.partitionSizeLimitPerResponse(Integer.parseInt(a.req("partition-limit")));
        }
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            TopicDescription d = get(c.client.describeTopics(List.of(topic), options).allTopicNames(), deadline).get(topic);
            List<Object> parts = new ArrayList<>();
            for (TopicPartitionInfo p : d.partitions()) {
                parts.add(obj("partition", p.partition(),
                        "leader", p.leader() == null || p.leader().isEmpty() ? null : p.leader().id(),
                        "replicas", nodeIds(p.replicas()),
                        "isr", nodeIds(p.isr())));
            }
            emit(obj("topic", d.name(), "topicId", d.topicId() == null ? null : d.topicId().toString(),
                    "internal", d.isInternal(), "partitions", parts));
        }
    }

    static void adminListOffsets(Args a) throws Exception {
        a.allow("bootstrap", "topic", "spec", "partition", "isolation", "timeout-ms");
        String topic = a.req("topic");
        String specName = a.req("spec");
        OffsetSpec spec;
        switch (specName) {
            case "earliest": spec = OffsetSpec.earliest(); break;
            case "latest": spec = OffsetSpec.latest(); break;
            case "max-timestamp": spec = OffsetSpec.maxTimestamp(); break;
            case "earliest-local": spec = OffsetSpec.earliestLocal(); break;
            case "latest-tiered": spec = OffsetSpec.latestTiered(); break;
            default: spec = OffsetSpec.forTimestamp(Long.parseLong(specName));
        }
        IsolationLevel isolation = IsolationLevel.valueOf(a.get("isolation", "read_uncommitted").toUpperCase());
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            List<TopicPartition> tps = a.has("partition")
                    ? List.of(new TopicPartition(topic, Integer.parseInt(a.req("partition"))))
                    : partitionsOf(c.client, topic, deadline);
            Map<TopicPartition, OffsetSpec> req = new LinkedHashMap<>();
            for (TopicPartition tp : tps) {
                req.put(tp, spec);
            }
            Map<TopicPartition, ListOffsetsResultInfo> res =
                    get(c.client.listOffsets(req, new ListOffsetsOptions(isolation)).all(), deadline);
            for (TopicPartition tp : tps) {
                ListOffsetsResultInfo info = res.get(tp);
                emit(obj("partition", tp.partition(), "offset", info.offset(), "timestamp", info.timestamp(),
                        "leaderEpoch", info.leaderEpoch().orElse(null)));
            }
        }
    }

    static void adminDescribeConfigs(Args a) throws Exception {
        a.allow("bootstrap", "topic", "broker", "timeout-ms");
        ConfigResource res = a.has("broker")
                ? new ConfigResource(ConfigResource.Type.BROKER, a.req("broker"))
                : new ConfigResource(ConfigResource.Type.TOPIC, a.req("topic"));
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            Config config = get(c.client.describeConfigs(List.of(res)).all(), deadline).get(res);
            int n = 0;
            for (ConfigEntry e : config.entries()) {
                emit(obj("name", e.name(), "value", e.value(), "source", e.source().name(),
                        "isDefault", e.isDefault(), "readOnly", e.isReadOnly(), "sensitive", e.isSensitive()));
                n++;
            }
            emit(obj("done", n));
        }
    }

    static void adminDeleteRecords(Args a) throws Exception {
        a.allow("bootstrap", "topic", "partition", "before", "timeout-ms");
        TopicPartition tp = new TopicPartition(a.req("topic"), Integer.parseInt(a.req("partition")));
        long before = Long.parseLong(a.req("before"));
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            long low = get(c.client.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(before)))
                    .lowWatermarks().get(tp), deadline).lowWatermark();
            emit(obj("partition", tp.partition(), "lowWatermark", low));
        }
    }

    static void adminReassign(Args a) throws Exception {
        a.allow("bootstrap", "topic", "partition", "replicas", "timeout-ms");
        TopicPartition tp = new TopicPartition(a.req("topic"), Integer.parseInt(a.req("partition")));
        String spec = a.req("replicas");
        Optional<NewPartitionReassignment> target = Optional.empty();
        if (!spec.equals("cancel")) {
            List<Integer> replicas = new ArrayList<>();
            for (String id : spec.split(",")) replicas.add(Integer.valueOf(id));
            target = Optional.of(new NewPartitionReassignment(replicas));
        }
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            String error = null;
            try {
                get(c.client.alterPartitionReassignments(Map.of(tp, target)).values().get(tp), deadline);
            } catch (ExecutionException e) {
                error = e.getCause().getClass().getSimpleName();
            }
            List<Object> reassigning = new ArrayList<>();
            Map<TopicPartition, PartitionReassignment> listed =
                    get(c.client.listPartitionReassignments().reassignments(), deadline);
            for (Map.Entry<TopicPartition, PartitionReassignment> e : listed.entrySet()) {
                reassigning.add(obj("topic", e.getKey().topic(), "partition", e.getKey().partition(),
                        "replicas", e.getValue().replicas(), "adding", e.getValue().addingReplicas(),
                        "removing", e.getValue().removingReplicas()));
            }
            emit(obj("error", error, "reassigning", reassigning));
        }
    }

    static void adminDescribeCluster(Args a) throws Exception {
        a.allow("bootstrap", "timeout-ms");
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            DescribeClusterResult r = c.client.describeCluster();
            Node controller = get(r.controller(), deadline);
            List<Object> nodes = new ArrayList<>();
            for (Node n : get(r.nodes(), deadline)) {
                nodes.add(obj("id", n.id(), "host", n.host(), "port", n.port(), "rack", n.rack()));
            }
            emit(obj("clusterId", get(r.clusterId(), deadline),
                    "controller", controller == null || controller.isEmpty() ? null : controller.id(),
                    "nodes", nodes));
        }
    }

    static void adminDescribeLogDirs(Args a) throws Exception {
        a.allow("bootstrap", "broker", "timeout-ms");
        List<Integer> brokers = new ArrayList<>();
        for (String id : a.all("broker")) brokers.add(Integer.parseInt(id));
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            Map<Integer, Map<String, org.apache.kafka.clients.admin.LogDirDescription>> all =
                    get(c.client.describeLogDirs(brokers).allDescriptions(), deadline);
            for (Map.Entry<Integer, Map<String, org.apache.kafka.clients.admin.LogDirDescription>> b
                    : new TreeMap<>(all).entrySet()) {
                for (Map.Entry<String, org.apache.kafka.clients.admin.LogDirDescription> d
                        : b.getValue().entrySet()) {
                    Map<String, Object> replicas = new TreeMap<>();
                    d.getValue().replicaInfos().forEach((tp, info) -> replicas.put(tp.toString(), info.size()));
                    emit(obj("broker", b.getKey(), "dir", d.getKey(),
                            "error", d.getValue().error() == null ? null : d.getValue().error().getClass().getSimpleName(),
                            "totalBytes", d.getValue().totalBytes().isPresent() ? d.getValue().totalBytes().getAsLong() : null,
                            "usableBytes", d.getValue().usableBytes().isPresent() ? d.getValue().usableBytes().getAsLong() : null,
                            "replicas", replicas));
                }
            }
        }
    }

    static void adminDescribeQuorum(Args a) throws Exception {
        a.allow("bootstrap", "timeout-ms");
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            org.apache.kafka.clients.admin.QuorumInfo q =
                    get(c.client.describeMetadataQuorum().quorumInfo(), deadline);
            List<Object> voters = new ArrayList<>();
            for (org.apache.kafka.clients.admin.QuorumInfo.ReplicaState r : q.voters()) voters.add(r.replicaId());
            List<Object> observers = new ArrayList<>();
            for (org.apache.kafka.clients.admin.QuorumInfo.ReplicaState r : q.observers()) observers.add(r.replicaId());
            emit(obj("leader", q.leaderId(), "epoch", q.leaderEpoch(), "highWatermark", q.highWatermark(),
                    "voters", voters, "observers", observers, "nodes", quorumNodes(q)));
        }
    }

    static List<Object> quorumNodes(org.apache.kafka.clients.admin.QuorumInfo q) {
        List<Object> ids = new ArrayList<>();
        try {  // QuorumInfo.nodes(): 3.9+ clients
            Object nodes = q.getClass().getMethod("nodes").invoke(q);
            ids.addAll(new TreeMap<>((Map<?, ?>) nodes).keySet());
        } catch (ReflectiveOperationException e) {
            // an older client: no nodes
        }
        return ids;
    }

    static void adminDeleteTopic(Args a) throws Exception {
        a.allow("bootstrap", "topic", "timeout-ms");
        String topic = a.req("topic");
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            get(c.client.deleteTopics(List.of(topic)).all(), deadline);
            emit(obj("deleted", topic));
        }
    }

    static void adminCreateDelegationToken(Args a) throws Exception {
        a.allow("bootstrap", "owner", "renewer", "timeout-ms");
        Deadline deadline = a.deadline();
        org.apache.kafka.clients.admin.CreateDelegationTokenOptions options =
            new org.apache.kafka.clients.admin.CreateDelegationTokenOptions();
        if (a.get("owner", null) != null) {
            options.owner(principal(a.get("owner", null)));
        }
        List<org.apache.kafka.common.security.auth.KafkaPrincipal> renewers = new ArrayList<>();
        for (String renewer : a.all("renewer")) {
            renewers.add(principal(renewer));
        }
        options.renewers(renewers);
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            org.apache.kafka.common.security.token.delegation.DelegationToken token =
                get(c.client.createDelegationToken(options).delegationToken(), deadline);
            Map<String, Object> line = tokenLine(token.tokenInfo());
            line.put("hmac", token.hmacAsBase64String());
            emit(line);
        }
    }

    static void adminDescribeDelegationTokens(Args a) throws Exception {
        a.allow("bootstrap", "timeout-ms");
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            List<org.apache.kafka.common.security.token.delegation.DelegationToken> tokens =
                get(c.client.describeDelegationToken().delegationTokens(), deadline);
            for (org.apache.kafka.common.security.token.delegation.DelegationToken t : tokens) {
                emit(tokenLine(t.tokenInfo()));
            }
            emitDone(tokens.size());
        }
    }

    static org.apache.kafka.common.security.auth.KafkaPrincipal principal(String text) {
        String[] parts = text.split(":", 2);  // TYPE:NAME, as KafkaPrincipal.toString writes it
        return new org.apache.kafka.common.security.auth.KafkaPrincipal(parts[0], parts[1]);
    }

    static Map<String, Object> tokenLine(
            org.apache.kafka.common.security.token.delegation.TokenInformation info) {
        List<Object> renewers = new ArrayList<>();
        for (org.apache.kafka.common.security.auth.KafkaPrincipal p : info.renewers()) {
            renewers.add(p.toString());
        }
        return obj("tokenId", info.tokenId(), "owner", info.owner().toString(),
                "tokenRequester", info.tokenRequester().toString(), "renewers", renewers,
                "issueTimestamp", info.issueTimestamp(), "expiryTimestamp", info.expiryTimestamp(),
                "maxTimestamp", info.maxTimestamp());
    }

    static void adminListTopics(Args a) throws Exception {
        a.allow("bootstrap", "internal", "timeout-ms");
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            List<String> names = new ArrayList<>(get(c.client.listTopics(
                    new ListTopicsOptions().listInternal(a.flag("internal"))).names(), deadline));
            Collections.sort(names);
            emit(obj("topics", names));
        }
    }

    static void adminDescribeFeatures(Args a) throws Exception {
        a.allow("bootstrap", "timeout-ms");
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            FeatureMetadata md = get(c.client.describeFeatures().featureMetadata(), deadline);
            Map<String, Object> finalized = new TreeMap<>();
            for (Map.Entry<String, FinalizedVersionRange> e : md.finalizedFeatures().entrySet()) {
                finalized.put(e.getKey(), (int) e.getValue().maxVersionLevel());
            }
            Map<String, Object> supported = new TreeMap<>();
            for (Map.Entry<String, SupportedVersionRange> e : md.supportedFeatures().entrySet()) {
                supported.put(e.getKey(), List.of((int) e.getValue().minVersion(), (int) e.getValue().maxVersion()));
            }
            emit(obj("finalized", finalized, "supported", supported));
        }
    }

    static void adminUpdateFeatures(Args a) throws Exception {
        a.allow("bootstrap", "feature", "downgrade", "timeout-ms");
        FeatureUpdate.UpgradeType type = a.flag("downgrade")
                ? FeatureUpdate.UpgradeType.SAFE_DOWNGRADE : FeatureUpdate.UpgradeType.UPGRADE;
        Map<String, FeatureUpdate> updates = new TreeMap<>();
        Map<String, Object> levels = new TreeMap<>();
        for (String kv : a.all("feature")) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--feature expects name=level, got: " + kv);
            }
            short level = Short.parseShort(kv.substring(eq + 1));
            updates.put(kv.substring(0, eq), new FeatureUpdate(level, type));
            levels.put(kv.substring(0, eq), (int) level);
        }
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            get(c.client.updateFeatures(updates, new UpdateFeaturesOptions()).all(), deadline);
            emit(obj("updated", levels));
        }
    }

    static final String DEFAULT_ENTITY = "<default>";

    static void adminAlterClientQuotas(Args a) throws Exception {
        a.allow("bootstrap", "entity", "set", "remove", "validate-only", "timeout-ms");
        Map<String, String> entity = new TreeMap<>();
        for (String kv : a.all("entity")) {
            int eq = kv.indexOf('=');
            String name = kv.substring(eq + 1);
            entity.put(kv.substring(0, eq), DEFAULT_ENTITY.equals(name) ? null : name);
        }
        List<ClientQuotaAlteration.Op> ops = new ArrayList<>();
        for (String kv : a.all("set")) {
            int eq = kv.indexOf('=');
            ops.add(new ClientQuotaAlteration.Op(kv.substring(0, eq), Double.parseDouble(kv.substring(eq + 1))));
        }
        for (String key : a.all("remove")) {
            ops.add(new ClientQuotaAlteration.Op(key, null));
        }
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            AlterClientQuotasOptions options = new AlterClientQuotasOptions().validateOnly(a.flag("validate-only"));
            get(c.client.alterClientQuotas(
                    List.of(new ClientQuotaAlteration(new ClientQuotaEntity(entity), ops)), options).all(), deadline);
            emit(obj("altered", entity));
        }
    }

    static void adminDescribeClientQuotas(Args a) throws Exception {
        a.allow("bootstrap", "match", "strict", "timeout-ms");
        List<ClientQuotaFilterComponent> components = new ArrayList<>();
        for (String match : a.all("match")) {
            int eq = match.indexOf('=');
            if (eq < 0) {
                components.add(ClientQuotaFilterComponent.ofEntityType(match));
            } else if (DEFAULT_ENTITY.equals(match.substring(eq + 1))) {
                components.add(ClientQuotaFilterComponent.ofDefaultEntity(match.substring(0, eq)));
            } else {
                components.add(ClientQuotaFilterComponent.ofEntity(match.substring(0, eq), match.substring(eq + 1)));
            }
        }
        ClientQuotaFilter filter = a.flag("strict")
                ? ClientQuotaFilter.containsOnly(components) : ClientQuotaFilter.contains(components);
        Deadline deadline = a.deadline();
        try (Closer<Admin> c = new Closer<>(newAdmin(a), CLOSE_TIMEOUT)) {
            Map<ClientQuotaEntity, Map<String, Double>> found =
                    get(c.client.describeClientQuotas(filter).entities(), deadline);
            List<Object> entries = new ArrayList<>();
            for (Map.Entry<ClientQuotaEntity, Map<String, Double>> e : found.entrySet()) {
                entries.add(obj("entity", new TreeMap<>(e.getKey().entries()), "values", new TreeMap<>(e.getValue())));
            }
            entries.sort((x, y) -> String.valueOf(x).compareTo(String.valueOf(y)));
            emit(obj("entries", entries));
        }
    }

    static void txnProduce(Args a) throws Exception {
        a.allow("bootstrap", "topic", "txn-id", "plan", "partition", "value-prefix", "timeout-ms");
        String topic = a.req("topic");
        Integer partition = a.has("partition") ? Integer.valueOf(a.req("partition")) : null;
        String valuePrefix = a.get("value-prefix", "v");
        List<String[]> plan = new ArrayList<>();
        for (String item : a.req("plan").split(",")) {
            String[] kv = item.trim().split(":");
            if (kv.length != 2 || !Set.of("commit", "abort", "open").contains(kv[0])) {
                throw new IllegalArgumentException("--plan items are commit:N, abort:N or open:N, got: " + item);
            }
            plan.add(kv);
        }
        for (int k = 0; k < plan.size() - 1; k++) {
            if (plan.get(k)[0].equals("open")) {
                throw new IllegalArgumentException("--plan: only the last transaction can be left open");
            }
        }
        Deadline deadline = a.deadline();
        KafkaProducer<byte[], byte[]> producer = newTransactionalProducer(a, a.req("txn-id"));
        try (Closer<KafkaProducer<byte[], byte[]>> c = new Closer<>(producer, CLOSE_TIMEOUT)) {
            producer.initTransactions();
            int i = 0;
            for (int k = 0; k < plan.size(); k++) {
                String outcome = plan.get(k)[0];
                int n = Integer.parseInt(plan.get(k)[1]);
                producer.beginTransaction();
                List<Future<RecordMetadata>> futures = new ArrayList<>(n);
                List<String> values = new ArrayList<>(n);
                for (int j = 0; j < n; j++, i++) {
                    values.add(valuePrefix + i);
                    futures.add(producer.send(new ProducerRecord<>(topic, partition, utf8("k" + i),
                            utf8(valuePrefix + i))));
                }
                producer.flush(); // every record is in the log (uncommitted) before the outcome
                for (int j = 0; j < n; j++) {
                    RecordMetadata md = await(futures.get(j), deadline);
                    emit(obj("txn", k, "partition", md.partition(), "offset", md.offset(), "value", values.get(j)));
                }
                if (outcome.equals("open")) {
                    emit(obj("txn", k, "outcome", "open"));
                    emit(obj("halted", k));
                    OUT.flush();
                    Runtime.getRuntime().halt(0); // as a crash: no end of transaction, no close
                }
                if (outcome.equals("commit")) {
                    producer.commitTransaction();
                } else {
                    producer.abortTransaction();
                }
                emit(obj("txn", k, "outcome", outcome.equals("commit") ? "committed" : "aborted"));
            }
            emit(obj("done", i));
        }
    }

    static void txnCopy(Args a) throws Exception {
        a.allow("bootstrap", "input", "output", "group", "txn-id", "instance-id", "crash-after", "pause-after",
                "pause-at", "timeout-ms");
        String pauseAt = a.get("pause-at", "send");
        if (!Set.of("send", "offsets").contains(pauseAt)) {
            throw new IllegalArgumentException("--pause-at must be send or offsets, got: " + pauseAt);
        }
        String input = a.req("input");
        String output = a.req("output");
        long crashAfter = Long.parseLong(a.get("crash-after", "-1"));
        long pauseAfter = Long.parseLong(a.get("pause-after", "-1"));
        Deadline deadline = a.deadline();
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put(ConsumerConfig.GROUP_ID_CONFIG, a.req("group"));
        if (a.has("instance-id")) {
            defaults.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, a.req("instance-id"));
        }
        defaults.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        defaults.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        defaults.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        long sent = 0;
        long copied = 0;
        KafkaProducer<byte[], byte[]> producer = newTransactionalProducer(a, a.req("txn-id"));
        try (Closer<KafkaProducer<byte[], byte[]>> cp = new Closer<>(producer, CLOSE_TIMEOUT);
             Closer<KafkaConsumer<byte[], byte[]>> cc = new Closer<>(newConsumer(a, defaults, true), CLOSE_TIMEOUT)) {
            KafkaConsumer<byte[], byte[]> consumer = cc.client;
            producer.initTransactions(); // fences an older producer with this ID, ends its transaction
            emit(obj("event", "initialized"));
            consumer.subscribe(List.of(input), printingListener(consumer, () -> { }));
            while (true) {
                if (deadline.remainingMs() <= 0) {
                    throw new TimeoutException("not caught up with " + input + " within --timeout-ms="
                            + deadline.timeoutMs + " (" + copied + " records copied)");
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                if (records.isEmpty()) {
                    if (caughtUp(consumer, deadline)) {
                        break;
                    }
                    continue;
                }
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    String value = r.value() == null ? null : str(r.value()).toUpperCase(java.util.Locale.ROOT);
                    producer.send(new ProducerRecord<>(output, r.key(), value == null ? null : utf8(value)));
                    offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                    sent++;
                    if (sent == crashAfter) {
                        producer.flush();
                        emit(obj("halted", sent));
                        OUT.flush();
                        Runtime.getRuntime().halt(0); // as a crash: no commit, no abort, no close
                    }
                    if (sent == pauseAfter && pauseAt.equals("send")) {
                        pause(producer, stdin, sent);
                    }
                }
                producer.flush(); // a send's error (e.g. fenced) comes before the offsets'
                if (sent >= pauseAfter && sent - records.count() < pauseAfter && pauseAt.equals("offsets")) {
                    pause(producer, stdin, sent);
                }
                String step = "sendOffsetsToTransaction";
                try {
                    producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                    step = "commitTransaction";
                    producer.commitTransaction();
                } catch (ProducerFencedException | OutOfOrderSequenceException | AuthorizationException e) {
                    emit(obj("event", "failed", "step", step, "error", e.getClass().getSimpleName()));
                    throw e; // fatal: the documented way out is close()
                } catch (KafkaException e) {
                    emit(obj("event", "failed", "step", step, "error", e.getClass().getSimpleName()));
                    try { // abortable: the documented way on is abortTransaction()
                        producer.abortTransaction();
                        emit(obj("event", "aborted"));
                    } catch (KafkaException abort) {
                        emit(obj("event", "abort-failed", "error", abort.getClass().getSimpleName()));
                    }
                    throw e;
                }
                copied += records.count();
                Map<String, Object> m = new TreeMap<>();
                for (Map.Entry<TopicPartition, OffsetAndMetadata> o : offsets.entrySet()) {
                    m.put(String.valueOf(o.getKey().partition()), o.getValue().offset());
                }
                emit(obj("event", "committed", "records", records.count(), "offsets", m));
            }
        }
        emit(obj("done", copied));
    }

    static void pause(KafkaProducer<?, ?> producer, BufferedReader stdin, long sent) throws IOException {
        producer.flush();
        emit(obj("event", "paused", "sent", sent));
        stdin.readLine(); // a line or end of file
        emit(obj("event", "resumed"));
    }

    /** Every assigned partition's position is at its end offset (for read_committed: the LSO). */
    static boolean caughtUp(KafkaConsumer<?, ?> consumer, Deadline deadline) {
        Set<TopicPartition> assigned = consumer.assignment();
        if (assigned.isEmpty()) {
            return false;
        }
        Map<TopicPartition, Long> end = consumer.endOffsets(assigned, deadline.remaining());
        for (TopicPartition tp : assigned) {
            if (consumer.position(tp, deadline.remaining()) < end.get(tp)) {
                return false;
            }
        }
        return true;
    }

    static <T> T await(Future<T> f, Deadline deadline) throws Exception {
        try {
            return f.get(deadline.remainingMs(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new TimeoutException("no ack within --timeout-ms=" + deadline.timeoutMs);
        }
    }

    /**
     * Loads the client classes without any broker, for a class-data-sharing archive made from
     * this run (java -XX:ArchiveClassesAtExit=...): later JVMs start about twice as fast.
     */
    static void warmup(Args a) throws Exception {
        a.allow();
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:1");
        p.setProperty("enable.metrics.push", "false");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        new KafkaProducer<byte[], byte[]>(p).close(Duration.ZERO);
        new KafkaConsumer<byte[], byte[]>(p).close(Duration.ZERO);
        Admin.create(p).close(Duration.ZERO);
        // Protocol and client classes otherwise load only while talking to a broker.
        String[] prefixes = {"org/apache/kafka/clients/", "org/apache/kafka/common/message/",
            "org/apache/kafka/common/requests/", "org/apache/kafka/common/record/",
            "org/apache/kafka/common/protocol/", "org/apache/kafka/common/compress/",
            "org/apache/kafka/common/errors/", "org/apache/kafka/common/header/",
            "org/apache/kafka/common/network/", "org/apache/kafka/common/utils/",
            "org/apache/kafka/common/security/", "org/apache/kafka/common/acl/"};
        ClassLoader loader = Harness.class.getClassLoader();
        int n = 0;
        String jar = KafkaProducer.class.getProtectionDomain().getCodeSource().getLocation().getPath();
        try (java.util.jar.JarFile jf = new java.util.jar.JarFile(jar)) {
            for (java.util.Enumeration<java.util.jar.JarEntry> en = jf.entries(); en.hasMoreElements(); ) {
                String name = en.nextElement().getName();
                if (!name.endsWith(".class") || name.contains("-") || name.contains("JsonConverter")) {
                    continue;
                }
                for (String prefix : prefixes) {
                    if (name.startsWith(prefix)) {
                        try {
                            Class.forName(name.substring(0, name.length() - 6).replace('/', '.'), false, loader);
                            n++;
                        } catch (Throwable ignored) {
                            // optional dependencies (e.g. OAuth, Kerberos) are not on the class path
                        }
                        break;
                    }
                }
            }
        }
        emit(obj("loaded", n));
    }

    // ------------------------------------------------------------------ client helpers

    static KafkaConsumer<byte[], byte[]> newConsumer(Args a, Map<String, String> defaults) {
        return newConsumer(a, defaults, false);
    }

    /** known: only the bare props a consumer knows (the others are the producer's). */
    static KafkaConsumer<byte[], byte[]> newConsumer(Args a, Map<String, String> defaults, boolean known) {
        Properties p = new Properties();
        p.putAll(defaults);
        p.putAll(known ? only(a.clientProps(), ConsumerConfig.configNames()) : a.clientProps()); // given props win
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(p);
    }

    /**
     * A transactional producer: transactional.id, max.block.ms = --timeout-ms (bounds
     * initTransactions and commitTransaction too), then the bare props a producer knows.
     */
    static KafkaProducer<byte[], byte[]> newTransactionalProducer(Args a, String transactionalId) {
        Properties p = new Properties();
        p.setProperty(ProducerConfig.MAX_BLOCK_MS_CONFIG, String.valueOf(a.timeoutMs()));
        p.putAll(only(a.clientProps(), ProducerConfig.configNames())); // given props win
        p.setProperty(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    static Properties only(Properties props, Set<String> names) {
        Properties p = new Properties();
        for (String k : props.stringPropertyNames()) {
            if (names.contains(k)) {
                p.setProperty(k, props.getProperty(k));
            }
        }
        return p;
    }

    /** Prints the rebalance callbacks; onAssigned runs after each "assigned" line. */
    static ConsumerRebalanceListener printingListener(KafkaConsumer<?, ?> consumer, Runnable onAssigned) {
        return new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> tps) {
                emitPartitions("revoked", tps, consumer);
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> tps) {
                emitPartitions("assigned", tps, consumer);
                onAssigned.run();
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> tps) {
                emitPartitions("lost", tps, consumer);
            }
        };
    }

    static void emitPartitions(String event, Collection<TopicPartition> tps, KafkaConsumer<?, ?> consumer) {
        List<Integer> ps = new ArrayList<>();
        for (TopicPartition tp : tps) {
            ps.add(tp.partition());
        }
        Collections.sort(ps);
        ConsumerGroupMetadata md = consumer.groupMetadata();
        emit(obj("event", event, "partitions", ps, "generation", md.generationId(), "memberId", md.memberId()));
    }

    /** A daemon thread that stops the consumer on a line "stop" or end of file on stdin. */
    static void stopOnStdin(KafkaConsumer<?, ?> consumer, AtomicBoolean stop) {
        Thread t = new Thread(() -> {
            try {
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                String line;
                while ((line = in.readLine()) != null && !line.trim().equals("stop")) {
                    // other lines are ignored
                }
            } catch (IOException ignored) {
                // as end of file
            }
            stop.set(true);
            consumer.wakeup();
        }, "stdin-stop");
        t.setDaemon(true);
        t.start();
    }

    /**
     * After stopping in the middle of a poll's records (--max-records), seeks back to the first
     * record not printed, so that the position (what close() auto-commits) matches the output.
     */
    static void rewindToUnprinted(KafkaConsumer<?, ?> consumer, ConsumerRecords<?, ?> records,
                                  Map<TopicPartition, OffsetAndMetadata> printed) {
        for (TopicPartition tp : records.partitions()) {
            List<? extends ConsumerRecord<?, ?>> rs = records.records(tp);
            long next = printed.containsKey(tp) ? printed.get(tp).offset() : rs.get(0).offset();
            if (next <= rs.get(rs.size() - 1).offset()) {
                consumer.seek(tp, next);
            }
        }
    }

    /** Commits offsets (mode sync or async; nothing for auto) and prints the outcome. */
    static void commit(KafkaConsumer<?, ?> consumer, String mode, Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (mode.equals("auto") || offsets.isEmpty()) {
            return;
        }
        if (mode.equals("async")) {
            consumer.commitAsync(offsets, (done, e) -> emitCommit(offsets, e));
            return;
        }
        try {
            try {
                consumer.commitSync(offsets);
            } catch (WakeupException e) { // a "stop" arrived: still commit what was printed
                consumer.commitSync(offsets);
            }
            emitCommit(offsets, null);
        } catch (CommitFailedException | RebalanceInProgressException e) {
            emitCommit(offsets, e);
        }
    }

    static void emitCommit(Map<TopicPartition, OffsetAndMetadata> offsets, Exception e) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> o : offsets.entrySet()) {
            m.put(String.valueOf(o.getKey().partition()), o.getValue().offset());
        }
        if (e == null) {
            emit(obj("event", "committed", "offsets", m));
        } else {
            emit(obj("event", "commit-failed", "offsets", m, "error", e.getClass().getSimpleName(),
                    "message", e.getMessage()));
        }
    }

    static Admin newAdmin(Args a) {
        Properties p = new Properties();
        // The Admin's own deadline fires first, with its reason ("Timed out waiting for a node
        // assignment", the last retriable error...), instead of a bare timeout of get().
        long timeoutMs = a.timeoutMs();
        p.setProperty(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, String.valueOf(timeoutMs));
        p.setProperty(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, String.valueOf(Math.min(30000, timeoutMs)));
        // Only the props an Admin knows: consumer-only props (isolation.level...) would just warn.
        Set<String> known = AdminClientConfig.configNames();
        for (String k : a.clientProps().stringPropertyNames()) {
            if (known.contains(k)) {
                p.put(k, a.clientProps().getProperty(k));
            }
        }
        return Admin.create(p);
    }

    static List<TopicPartition> partitionsOf(Admin admin, String topic, Deadline deadline) throws Exception {
        TopicDescription d = get(admin.describeTopics(List.of(topic)).allTopicNames(), deadline).get(topic);
        List<TopicPartition> tps = new ArrayList<>();
        for (TopicPartitionInfo p : d.partitions()) {
            tps.add(new TopicPartition(topic, p.partition()));
        }
        tps.sort((x, y) -> Integer.compare(x.partition(), y.partition()));
        return tps;
    }

    /**
     * Polls the assigned partitions until each position reaches its end offset and emits the
     * records below the end offsets (a snapshot, as Spark reads [earliest, latest)); records at or
     * past an end offset are counted in PAST_END, not emitted.
     */
    static int pollUntil(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> end, Deadline deadline) {
        int n = 0;
        Set<TopicPartition> pending = new HashSet<>(end.keySet());
        while (true) {
            for (Iterator<TopicPartition> it = pending.iterator(); it.hasNext(); ) {
                TopicPartition tp = it.next();
                if (consumer.position(tp, deadline.remaining()) >= end.get(tp)) {
                    it.remove();
                }
            }
            if (pending.isEmpty()) {
                return n;
            }
            if (deadline.remainingMs() <= 0) {
                Map<String, String> where = new LinkedHashMap<>();
                for (TopicPartition tp : pending) {
                    where.put(tp.toString(), consumer.position(tp, Duration.ofSeconds(1)) + "/" + end.get(tp));
                }
                throw new TimeoutException("positions did not reach end offsets (position/end): " + where);
            }
            ConsumerRecords<byte[], byte[]> records =
                    consumer.poll(Duration.ofMillis(Math.min(200, Math.max(1, deadline.remainingMs()))));
            for (ConsumerRecord<byte[], byte[]> r : records) {
                if (r.offset() >= end.get(new TopicPartition(r.topic(), r.partition()))) {
                    pastEnd++;
                    continue;
                }
                emitRecord(r);
                n++;
            }
        }
    }

    /** {"done":n}, plus "pastEnd":k when records at/after the end offsets were polled (not emitted). */
    static void emitDone(int n) {
        Map<String, Object> m = obj("done", n);
        if (pastEnd > 0) {
            m.put("pastEnd", pastEnd);
        }
        emit(m);
    }

    static void emitRecord(ConsumerRecord<byte[], byte[]> r) {
        List<Object> hs = new ArrayList<>();
        for (Header h : r.headers()) {
            hs.add(Arrays.asList(h.key(), str(h.value())));
        }
        emit(obj("topic", r.topic(), "partition", r.partition(), "offset", r.offset(),
                "timestamp", r.timestamp(), "timestampType", r.timestampType().name,
                "leaderEpoch", r.leaderEpoch().orElse(null),
                "key", str(r.key()), "value", str(r.value()), "headers", hs));
    }

    static <T> T get(KafkaFuture<T> f, Deadline deadline) throws Exception {
        try {
            // grace: let the Admin's own timeout (same length) report first
            return f.get(deadline.remainingMs() + 5000, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new TimeoutException("no result within --timeout-ms=" + deadline.timeoutMs + " (+5 s)");
        }
    }

    /** For response fields an older API version lacks: null instead of an error. */
    static Object orNull(KafkaFuture<?> f, Deadline deadline) {
        try {
            Object v = get(f, deadline);
            return v == null || v instanceof Number ? v : v.toString();
        } catch (Exception e) {
            return null;
        }
    }

    static List<Integer> nodeIds(List<Node> nodes) {
        List<Integer> ids = new ArrayList<>();
        for (Node n : nodes) {
            ids.add(n.id());
        }
        return ids;
    }

    static Throwable unwrap(Throwable t) {
        while ((t instanceof ExecutionException || t instanceof java.util.concurrent.CompletionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    static void setDefaultProperty(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    /** Closes a client with a bounded wait (plain close() can wait for minutes on a dead broker). */
    static final class Closer<C> implements AutoCloseable {
        final C client;
        final Duration timeout;

        Closer(C client, Duration timeout) {
            this.client = client;
            this.timeout = timeout;
        }

        @Override
        public void close() {
            if (client instanceof KafkaConsumer) {
                ((KafkaConsumer<?, ?>) client).close(timeout);
            } else if (client instanceof KafkaProducer) {
                ((KafkaProducer<?, ?>) client).close(timeout);
            } else if (client instanceof Admin) {
                ((Admin) client).close(timeout);
            } else {
                throw new IllegalStateException("not a Kafka client: " + client);
            }
        }
    }

    static final class Deadline {
        final long end;
        final long timeoutMs;

        Deadline(long timeoutMs) {
            this.timeoutMs = timeoutMs;
            end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        }

        long remainingMs() {
            return Math.max(0, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()));
        }

        Duration remaining() {
            return Duration.ofMillis(remainingMs());
        }
    }

    // ------------------------------------------------------------------ arguments

    static final class Args {
        static final Set<String> FLAGS = Set.of("headers", "internal", "report-positions", "downgrade", "strict",
                "validate-only", "no-quota-retry");
        final Map<String, List<String>> opts = new LinkedHashMap<>();
        final Properties props = new Properties();

        static Args parse(String[] argv) {
            Args a = new Args();
            for (int i = 0; i < argv.length; i++) {
                String s = argv[i];
                if (s.startsWith("--")) {
                    String name = s.substring(2);
                    String value;
                    int eq = name.indexOf('=');
                    if (eq >= 0) { // --name=value
                        value = name.substring(eq + 1);
                        name = name.substring(0, eq);
                    } else if (FLAGS.contains(name)) {
                        value = "true";
                    } else if (i + 1 < argv.length) {
                        value = argv[++i];
                    } else {
                        throw new IllegalArgumentException("option --" + name + " needs a value");
                    }
                    a.opts.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
                } else if (s.indexOf('=') > 0) {
                    a.props.setProperty(s.substring(0, s.indexOf('=')), s.substring(s.indexOf('=') + 1));
                } else {
                    throw new IllegalArgumentException("unexpected argument: " + s
                            + " (options are --name value, client props key=value)");
                }
            }
            return a;
        }

        void allow(String... names) {
            Set<String> ok = new HashSet<>(Arrays.asList(names));
            for (String k : opts.keySet()) {
                if (!ok.contains(k)) {
                    throw new IllegalArgumentException("unknown option --" + k + " (allowed: " + ok + ")");
                }
            }
        }

        boolean has(String name) {
            return opts.containsKey(name);
        }

        boolean flag(String name) {
            return has(name) && !"false".equals(get(name, "true"));
        }

        String get(String name, String dflt) {
            List<String> v = opts.get(name);
            return v == null ? dflt : v.get(v.size() - 1);
        }

        String req(String name) {
            String v = get(name, null);
            if (v == null) {
                throw new IllegalArgumentException("missing option --" + name);
            }
            return v;
        }

        List<String> all(String name) {
            return opts.getOrDefault(name, List.of());
        }

        long timeoutMs() {
            return Long.parseLong(get("timeout-ms", "30000"));
        }

        Deadline deadline() {
            return new Deadline(timeoutMs());
        }

        /** bootstrap.servers from --bootstrap plus the bare key=value props. */
        Properties clientProps() {
            Properties p = new Properties();
            p.putAll(props);
            p.setProperty("bootstrap.servers", req("bootstrap"));
            return p;
        }
    }

    // ------------------------------------------------------------------ JSON

    /** obj("k1", v1, "k2", v2, ...) -> insertion-ordered map. */
    static Map<String, Object> obj(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    static void emit(Map<String, Object> m) {
        StringBuilder sb = new StringBuilder(128);
        json(sb, m);
        OUT.print(sb.append('\n'));
        OUT.flush(); // a killed harness still leaves what it had printed
    }

    static void json(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof String) {
            jsonString(sb, (String) v);
        } else if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
            sb.append(v);
        } else if (v instanceof Double && Double.isFinite((Double) v)) {
            sb.append(v);
        } else if (v instanceof Boolean) {
            sb.append(v);
        } else if (v instanceof Map) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                jsonString(sb, String.valueOf(e.getKey()));
                sb.append(':');
                json(sb, e.getValue());
            }
            sb.append('}');
        } else if (v instanceof Collection) {
            sb.append('[');
            boolean first = true;
            for (Object o : (Collection<?>) v) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                json(sb, o);
            }
            sb.append(']');
        } else {
            jsonString(sb, v.toString());
        }
    }

    static void jsonString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20 || Character.isSurrogate(c)) {
                        // control chars; surrogates too, so that a lone one stays valid JSON
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }
}

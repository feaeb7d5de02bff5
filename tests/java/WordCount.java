// A Kafka Streams word count, exactly once, for fakebroker's tests (tests/clients/streams.py).
//
// Single file, no build tool: compiled with javac against the jars .ci/install-kafka puts in
// ${FAKEBROKER_CLIENTS_DIR:-~/.cache/fakebroker-clients}/streams-4.4.0/ (kafka-streams 4.4.0 and
// the kafka-clients 4.4.0 it pulls), run by tests/clients/streams.py.
//
// Usage: java -cp <streams jars>:<wordcount jar> WordCount --bootstrap B --app-id A --input IN
//            --output OUT --state-dir DIR [--delay-ms MS] [key=value ...]
//   Topology: IN (values are lines of text, keys ignored)
//     -> flatMapValues: the line lower-cased, split on anything but letters and digits
//     -> groupBy(word), named "words": a repartition topic A-words-repartition
//     -> count(), store "counts": a RocksDB store with its changelog topic A-counts-changelog
//     -> OUT: key the word, value its new count as a decimal string (UTF-8)
//   Defaults (bare key=value props win): processing.guarantee=exactly_once_v2,
//   commit.interval.ms=100, statestore.cache.max.bytes=0 (no cache: every count update is
//   sent, so a word's committed output is exactly 1, 2, ..., n), num.stream.threads=1,
//   replication.factor=1, state.dir=DIR.
//   --delay-ms MS: sleep MS per input line (stretches processing, so a test can kill the app
//   in the middle of the stream).
//
// Output (JSON lines on stdout): {"state":"<new state>","from":"<old state>"} at each state
// change (REBALANCING, RUNNING, PENDING_SHUTDOWN, NOT_RUNNING, ERROR...); {"seen":n} every 20
// input lines read since start; on an uncaught exception in a stream thread
// {"error":"<class>","message":...} and the client shuts down; a line "stop" or end of file on
// stdin closes it (10 s at most) and prints {"done":lines seen}, after its last state line.
// Logs (slf4j-simple) on stderr at WARN unless -Dorg.slf4j.simpleLogger.defaultLogLevel=...

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

public final class WordCount {
    private static final PrintStream OUT =
            new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);

    public static void main(String[] argv) throws Exception {
        setDefaultProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        setDefaultProperty("org.slf4j.simpleLogger.logFile", "System.err");
        setDefaultProperty("org.slf4j.simpleLogger.showDateTime", "true");
        setDefaultProperty("org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS");
        Map<String, String> opts = new LinkedHashMap<>();
        Properties props = new Properties();
        props.setProperty(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.setProperty(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        props.setProperty(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        props.setProperty(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        props.setProperty(StreamsConfig.REPLICATION_FACTOR_CONFIG, "1");
        for (int i = 0; i < argv.length; i++) {
            String s = argv[i];
            if (s.startsWith("--") && i + 1 < argv.length) {
                opts.put(s.substring(2), argv[++i]);
            } else if (s.indexOf('=') > 0) {
                props.setProperty(s.substring(0, s.indexOf('=')), s.substring(s.indexOf('=') + 1));
            } else {
                throw new IllegalArgumentException("unexpected argument: " + s);
            }
        }
        for (String k : opts.keySet()) {
            if (!Arrays.asList("bootstrap", "app-id", "input", "output", "state-dir", "delay-ms").contains(k)) {
                throw new IllegalArgumentException("unknown option --" + k);
            }
        }
        props.setProperty(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, req(opts, "bootstrap"));
        props.setProperty(StreamsConfig.APPLICATION_ID_CONFIG, req(opts, "app-id"));
        props.setProperty(StreamsConfig.STATE_DIR_CONFIG, req(opts, "state-dir"));
        long delayMs = Long.parseLong(opts.getOrDefault("delay-ms", "0"));
        AtomicLong seen = new AtomicLong();

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(req(opts, "input"), Consumed.with(Serdes.ByteArray(), Serdes.String()))
                .peek((k, line) -> {
                    if (seen.incrementAndGet() % 20 == 0) {
                        emit("{\"seen\":" + seen.get() + "}");
                    }
                    if (delayMs > 0) {
                        try {
                            Thread.sleep(delayMs);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                })
                .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}]+")))
                .filter((k, word) -> !word.isEmpty())
                .groupBy((k, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
                .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts")
                        .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
                .toStream()
                .mapValues(String::valueOf)
                .to(req(opts, "output"), Produced.with(Serdes.String(), Serdes.String()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        CountDownLatch stopped = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            emit("{\"state\":\"" + now + "\",\"from\":\"" + before + "\"}");
            if (now == KafkaStreams.State.NOT_RUNNING || now == KafkaStreams.State.ERROR) {
                stopped.countDown();
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            emit("{\"error\":" + quote(e.getClass().getSimpleName()) + ",\"message\":" + quote(String.valueOf(e.getMessage()))
                    + ",\"cause\":" + quote(String.valueOf(e.getCause())) + "}");
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = stdin.readLine()) != null && !line.trim().equals("stop")) {
            // other lines are ignored
        }
        streams.close(Duration.ofSeconds(10));
        stopped.await(10, TimeUnit.SECONDS); // its last state line comes before "done"
        emit("{\"done\":" + seen.get() + "}");
        OUT.flush();
        System.exit(0);
    }

    static String req(Map<String, String> opts, String name) {
        String v = opts.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing option --" + name);
        }
        return v;
    }

    static void setDefaultProperty(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    static synchronized void emit(String json) {
        OUT.print(json + "\n");
        OUT.flush(); // a killed app still leaves what it had printed
    }

    static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append('"').toString();
    }
}

// A Kafka 4.4 KafkaShareConsumer (KIP-932) for fakebroker's tests: one member of a share group.
//
// Single file, compiled with javac against the kafka-clients 4.4.0 jars (tests/clients/share.py,
// as tests/clients/java.py builds the harness), run in the background as a GroupMember.
//
// Usage: java -cp <jars>:<jar> ShareConsume --bootstrap B --topic T --group G
//            [--mode implicit|explicit] [--release V,...] [--reject V,...] [--hold V,...]
//            [key=value ...]
//   --mode implicit (the default): records are accepted when the next poll comes.
//   --mode explicit: each record is acknowledged by its value: RELEASE for the values named by
//       --release, REJECT for --reject, ACCEPT for the others, then commitSync().
//   --hold V: on receiving a record of value V, print it and stop polling (never acknowledge
//       it): its acquisition lock runs out and the broker gives it to another member.
//   bare key=value arguments are consumer properties.
//   It stops on a line "stop" or end of file on stdin (then closes the consumer).
// Output, one JSON object per line:
//   {"offset","partition","value","deliveryCount","ack"} per record received (ack: the type
//   acknowledged, "implicit" or "hold"), {"event":"held"} when it stopped polling,
//   {"done":n} after close (n records received), {"error","message"} on failure.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

public final class ShareConsume {
    public static void main(String[] argv) {
        try {
            run(argv);
        } catch (Throwable t) {
            System.out.println("{\"error\":" + quote(t.getClass().getSimpleName()) + ",\"message\":"
                    + quote(String.valueOf(t.getMessage())) + "}");
            System.out.flush();
            System.exit(1);
        }
    }

    static void run(String[] argv) throws Exception {
        Map<String, String> opts = new HashMap<>();
        Properties props = new Properties();
        for (int i = 0; i < argv.length; i++) {
            if (argv[i].startsWith("--")) {
                opts.put(argv[i].substring(2), argv[++i]);
            } else {
                int eq = argv[i].indexOf('=');
                props.put(argv[i].substring(0, eq), argv[i].substring(eq + 1));
            }
        }
        boolean explicit = opts.getOrDefault("mode", "implicit").equals("explicit");
        Set<String> release = values(opts.get("release"));
        Set<String> reject = values(opts.get("reject"));
        Set<String> hold = values(opts.get("hold"));
        props.put("bootstrap.servers", opts.get("bootstrap"));
        props.put("group.id", opts.get("group"));
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        props.put("share.acknowledgement.mode", explicit ? "explicit" : "implicit");
        AtomicBoolean stop = new AtomicBoolean();
        int received = 0;
        boolean held = false;
        KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props);
        stopOnStdin(consumer, stop);
        try {
            consumer.subscribe(List.of(opts.get("topic")));
            while (!stop.get() && !held) {
                ConsumerRecords<String, String> records;
                try {
                    records = consumer.poll(Duration.ofMillis(200));
                } catch (WakeupException e) {
                    break;
                }
                for (ConsumerRecord<String, String> r : records) {
                    received++;
                    String ack;
                    if (hold.contains(r.value())) {
                        ack = "hold";
                        held = true;
                    } else if (!explicit) {
                        ack = "implicit";
                    } else {
                        AcknowledgeType type = release.contains(r.value()) ? AcknowledgeType.RELEASE
                                : reject.contains(r.value()) ? AcknowledgeType.REJECT : AcknowledgeType.ACCEPT;
                        consumer.acknowledge(r, type);
                        ack = type.name();
                    }
                    emit("{\"offset\":" + r.offset() + ",\"partition\":" + r.partition()
                            + ",\"value\":" + quote(r.value()) + ",\"deliveryCount\":"
                            + r.deliveryCount().map(String::valueOf).orElse("null")
                            + ",\"ack\":" + quote(ack) + "}");
                    if (held) {
                        break;
                    }
                }
                if (explicit && !held && !records.isEmpty()) {
                    consumer.commitSync();
                }
            }
            if (held) {
                emit("{\"event\":\"held\"}");
                while (!stop.get()) {
                    Thread.sleep(50);
                }
            }
        } finally {
            if (!held) {
                consumer.close();
            }
        }
        emit("{\"done\":" + received + "}");
        System.exit(0);  // a held consumer is not closed: its acquired record stays locked
    }

    static Set<String> values(String list) {
        return list == null ? Set.of() : new HashSet<>(Arrays.asList(list.split(",")));
    }

    static void stopOnStdin(KafkaShareConsumer<?, ?> consumer, AtomicBoolean stop) {
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

    static synchronized void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}

// Time to first record of a Kafka Java client group consumer at client defaults.
//
// Usage: java -cp <kafka client jars>:<classes> FirstRecord BOOTSTRAP TOPIC ROUNDS
// Each round: a new KafkaConsumer with a fresh group.id, auto.offset.reset=earliest and
// every other setting at its default (classic group protocol); subscribe([TOPIC]) and poll
// until a record arrives; print the milliseconds from creating the consumer until then, one
// line per round; close() (the member leaves its group). Round 1 pays the JVM's class loading
// and JIT warm-up; later rounds show what a warm JVM (a test suite past its first test) sees.
// Exit code 2 if a round has no record within 120 s.

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class FirstRecord {
    public static void main(String[] args) {
        String bootstrap = args[0];
        String topic = args[1];
        int rounds = Integer.parseInt(args[2]);
        for (int round = 0; round < rounds; round++) {
            Properties props = new Properties();
            props.put("bootstrap.servers", bootstrap);
            props.put("group.id", "first-record-" + UUID.randomUUID());
            props.put("auto.offset.reset", "earliest");
            props.put("key.deserializer", ByteArrayDeserializer.class.getName());
            props.put("value.deserializer", ByteArrayDeserializer.class.getName());
            long begin = System.nanoTime();
            long deadline = begin + Duration.ofSeconds(120).toNanos();
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
                consumer.subscribe(List.of(topic));
                while (consumer.poll(Duration.ofMillis(50)).isEmpty()) {
                    if (System.nanoTime() > deadline) {
                        System.exit(2);
                    }
                }
                System.out.println((System.nanoTime() - begin) / 1e6);
                System.out.flush();
            }
        }
    }
}

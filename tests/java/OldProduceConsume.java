// The Apache Kafka Java client 0.11.0.3 producing and consuming, for
// tests/test_legacy_formats.py: against a broker of 0.10.x it writes and reads magic 1.
//   java -cp <compiled>:<java-0.11.0.3 jars> OldProduceConsume BOOTSTRAP TOPIC COUNT CODEC
// Sends COUNT records (key k<i>, value v<i>, timestamp 1700000000000 + i) to partition 0 of
// TOPIC with compression CODEC (none, gzip, snappy, lz4), then reads the partition from its
// start until it has COUNT records (30 s at most), printing one JSON line per record:
// {"offset": O, "key": K, "value": V, "timestamp": T, "type": "CreateTime"|"LogAppendTime"}.
import java.util.Collections;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class OldProduceConsume {
    public static void main(String[] args) throws Exception {
        String topic = args[1];
        int count = Integer.parseInt(args[2]);
        Properties produce = new Properties();
        produce.put("bootstrap.servers", args[0]);
        produce.put("compression.type", args[3]);
        produce.put("linger.ms", "50");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(
                produce, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, 0, 1700000000000L + i, "k" + i,
                        "v" + i));
            }
            producer.flush();
        }
        Properties consume = new Properties();
        consume.put("bootstrap.servers", args[0]);
        consume.put("enable.auto.commit", "false");
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(
                consume, new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(Collections.singleton(partition));
            consumer.seekToBeginning(Collections.singleton(partition));
            int read = 0;
            long deadline = System.currentTimeMillis() + 30000;
            while (read < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(500)) {
                    System.out.println("{\"offset\": " + r.offset() + ", \"key\": \"" + r.key()
                            + "\", \"value\": \"" + r.value() + "\", \"timestamp\": "
                            + r.timestamp() + ", \"type\": \"" + r.timestampType() + "\"}");
                    read++;
                }
            }
        }
    }
}

// The client matrix's four rounds for the Apache Kafka Java client, one source for every release
// from 0.11.0.3 to 4.4.0 (tests/matrix/): the methods that changed between them (poll(long)
// gone in 4.0, DescribeTopicsResult.all() renamed allTopicNames()) are found by reflection.
//   java -cp <compiled>:<kafka-clients jars> Rounds ROUND BOOTSTRAP TOPIC GROUP
// ROUND: produce | assign-consume | group | admin (what each does: tests/matrix/rounds.py).
// Prints one JSON line: {"outcome": "pass"} or {"outcome": "<exception's simple class name>",
// "message": "..."} (the first exception of the round, unwrapped from ExecutionException).
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class Rounds {
    static final int RECORDS = 6;  // what the runner seeds and a produce round writes
    static final long DEADLINE_MS = 60_000;

    static class Failed extends Exception {
        Failed(String message) {
            super(message);
        }
    }

    public static void main(String[] args) {
        String round = args[0], bootstrap = args[1], topic = args[2], group = args[3];
        String outcome;
        try {
            switch (round) {
                case "produce": produce(bootstrap, topic); break;
                case "assign-consume": assignConsume(bootstrap, topic); break;
                case "group": group(bootstrap, topic, group); break;
                case "admin": admin(bootstrap, topic); break;
                default: throw new IllegalArgumentException("no round " + round);
            }
            outcome = "{\"outcome\": \"pass\"}";
        } catch (Throwable e) {
            Throwable cause = e;
            while ((cause instanceof ExecutionException
                    || cause instanceof java.lang.reflect.InvocationTargetException)
                    && cause.getCause() != null) {
                cause = cause.getCause();
            }
            outcome = "{\"outcome\": \"" + cause.getClass().getSimpleName() + "\", \"message\": \""
                    + String.valueOf(cause.getMessage()).replace("\\", "\\\\").replace("\"", "\\\"")
                            .replace("\n", " ") + "\"}";
        }
        System.out.println(outcome);
        System.out.flush();
        System.exit(0);
    }

    static Properties common(String bootstrap) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("request.timeout.ms", "15000");
        return props;
    }

    static void produce(String bootstrap, String topic) throws Exception {
        Properties props = common(bootstrap);
        props.put("acks", "all");
        props.put("max.block.ms", "60000");
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k" + i, "v" + i)).get();
            }
        }
    }

    static KafkaConsumer<String, String> consumer(String bootstrap, String group) {
        Properties props = common(bootstrap);
        if (group != null) {
            props.put("group.id", group);
        }
        props.put("auto.offset.reset", "earliest");
        props.put("enable.auto.commit", "false");
        props.put("session.timeout.ms", "10000");
        props.put("heartbeat.interval.ms", "500");
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        return new KafkaConsumer<>(props);
    }

    /** poll(Duration) from 2.0, poll(long) before (removed in 4.0). */
    @SuppressWarnings("unchecked")
    static ConsumerRecords<String, String> poll(KafkaConsumer<String, String> consumer, long ms)
            throws Exception {
        for (Method method : KafkaConsumer.class.getMethods()) {
            if (method.getName().equals("poll") && method.getParameterCount() == 1
                    && method.getParameterTypes()[0] == Duration.class) {
                return (ConsumerRecords<String, String>) method.invoke(consumer, Duration.ofMillis(ms));
            }
        }
        return (ConsumerRecords<String, String>) KafkaConsumer.class
                .getMethod("poll", long.class).invoke(consumer, ms);
    }

    static void assignConsume(String bootstrap, String topic) throws Exception {
        TopicPartition partition = new TopicPartition(topic, 0);
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(bootstrap, null)) {
            consumer.assign(Collections.singleton(partition));
            consumer.seekToBeginning(Collections.singleton(partition));
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (values.size() < RECORDS) {
                if (System.currentTimeMillis() > deadline) {
                    throw new Failed("read " + values.size() + " of " + RECORDS + " records");
                }
                for (ConsumerRecord<String, String> record : poll(consumer, 200)) {
                    values.add(record.value());
                }
            }
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            expected.add("v" + i);
        }
        if (!values.equals(expected)) {
            throw new Failed("read " + values);
        }
    }

    /** Three members of one group on a topic of three partitions (RECORDS spread over them),
     * each polling on a thread of its own (an old client's poll blocks in its join): each ends
     * with one partition read to its end, every record read, offsets committed. */
    static void group(String bootstrap, String topic, String group) throws Exception {
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            members.add(new Member(bootstrap, topic, group));
        }
        for (Member member : members) {
            member.start();
        }
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        try {
            while (!(read(members) >= RECORDS && spread(members))) {
                for (Member member : members) {
                    if (member.failure != null) {
                        throw member.failure;
                    }
                }
                if (System.currentTimeMillis() > deadline) {
                    List<Set<TopicPartition>> held = new ArrayList<>();
                    for (Member member : members) {
                        held.add(member.assignment);
                    }
                    throw new Failed("read " + read(members) + " of " + RECORDS
                            + " records; assignments " + held);
                }
                Thread.sleep(50);
            }
        } finally {
            // Every member commits before any leaves: a leave starts a rebalance, in which a
            // commit may be refused.
            for (Member member : members) {
                member.done = true;
            }
            for (Member member : members) {
                member.committed.await(30, java.util.concurrent.TimeUnit.SECONDS);
            }
            for (Member member : members) {
                member.close.countDown();
                member.join(30_000);
            }
        }
        for (Member member : members) {
            if (member.failure != null) {
                throw member.failure;
            }
        }
        if (read(members) != RECORDS) {
            throw new Failed("read " + read(members) + " records, not " + RECORDS);
        }
    }

    /** A group member: polls until told it is done, commits, and closes when told to. */
    static class Member extends Thread {
        final KafkaConsumer<String, String> consumer;
        volatile Set<TopicPartition> assignment = Collections.emptySet();
        final Set<String> read = java.util.Collections.synchronizedSet(new HashSet<>());
        volatile boolean atEnd;  // holds one partition, its position at the partition's end
        volatile boolean done;
        volatile Exception failure;
        final java.util.concurrent.CountDownLatch committed = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch close = new java.util.concurrent.CountDownLatch(1);

        Member(String bootstrap, String topic, String group) {
            consumer = consumer(bootstrap, group);
            consumer.subscribe(Collections.singleton(topic));
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (!done) {
                    for (ConsumerRecord<String, String> record : poll(consumer, 100)) {
                        read.add(record.partition() + ":" + record.offset());
                    }
                    Set<TopicPartition> now = new HashSet<>(consumer.assignment());
                    atEnd = now.size() == 1
                            && consumer.position(now.iterator().next()) >= RECORDS / 3;
                    assignment = now;
                }
                consumer.commitSync();
            } catch (Exception e) {
                failure = e;
            } finally {
                committed.countDown();
                try {
                    close.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                consumer.close();
            }
        }
    }

    /** Records read by any member, each counted once (a member may read a record again
     * after a rebalance: offsets are committed at the end). */
    static int read(List<Member> members) {
        Set<String> read = new HashSet<>();
        for (Member member : members) {
            synchronized (member.read) {
                read.addAll(member.read);
            }
        }
        return read.size();
    }

    static boolean spread(List<Member> members) {
        Set<TopicPartition> all = new HashSet<>();
        for (Member member : members) {
            if (!member.atEnd) {
                return false;
            }
            all.addAll(member.assignment);
        }
        return all.size() == 3;
    }

    /** describeTopics(...).allTopicNames() from 3.1, all() before (gone in 4.0). */
    @SuppressWarnings("unchecked")
    static Map<String, TopicDescription> describeTopic(AdminClient admin, String topic)
            throws Exception {
        Object described = admin.describeTopics(Collections.singleton(topic));
        Method all;
        try {
            all = described.getClass().getMethod("allTopicNames");
        } catch (NoSuchMethodException e) {
            all = described.getClass().getMethod("all");
        }
        all.setAccessible(true);
        try {
            return ((KafkaFuture<Map<String, TopicDescription>>) all.invoke(described)).get();
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
    }

    /** Create TOPIC (2 partitions), describe it and its configs, delete it. */
    static void admin(String bootstrap, String topic) throws Exception {
        try (AdminClient admin = AdminClient.create(common(bootstrap))) {
            admin.createTopics(Collections.singleton(new NewTopic(topic, 2, (short) 1))).all().get();
            // Kafka answers CreateTopics before its broker's metadata holds the topic: a
            // describe may meet UNKNOWN_TOPIC_OR_PARTITION a moment longer, as a user's would.
            Map<String, TopicDescription> topics = null;
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (topics == null) {
                try {
                    topics = describeTopic(admin, topic);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof UnknownTopicOrPartitionException)
                            || System.currentTimeMillis() > deadline) {
                        throw e;
                    }
                    Thread.sleep(100);
                }
            }
            int partitions = topics.get(topic).partitions().size();
            if (partitions != 2) {
                throw new Failed("described " + partitions + " partitions");
            }
            admin.describeConfigs(Collections.singleton(
                    new ConfigResource(ConfigResource.Type.TOPIC, topic))).all().get();
            admin.deleteTopics(Collections.singleton(topic)).all().get();
        }
    }
}

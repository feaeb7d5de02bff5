// An admin round of the Apache Kafka Java client 0.11.0.3 (the oldest AdminClient), for
// tests/test_releases.py: a client generation Kafka 4.x refuses (KIP-896).
//   java -cp <compiled>:<java-0.11.0.3 jars> OldAdmin BOOTSTRAP TOPIC
// Prints one JSON line per step, in order: {"step": NAME, "ok": true} or
// {"step": NAME, "error": "<exception's simple class name>: <message>"}; steps: create_topic
// (TOPIC, 1 partition, replication 1), describe_cluster (ok when it lists a broker),
// describe_configs (the topic's configs).
import java.util.Collections;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;

public class OldAdmin {
    interface Step {
        boolean run() throws Exception;
    }

    public static void main(String[] args) {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("request.timeout.ms", "15000");
        String topic = args[1];
        try (AdminClient admin = AdminClient.create(props)) {
            step("create_topic", () -> {
                admin.createTopics(Collections.singleton(new NewTopic(topic, 1, (short) 1)))
                        .all().get();
                return true;
            });
            step("describe_cluster", () -> !admin.describeCluster().nodes().get().isEmpty());
            step("describe_configs", () -> {
                admin.describeConfigs(Collections.singleton(
                        new ConfigResource(ConfigResource.Type.TOPIC, topic))).all().get();
                return true;
            });
        }
    }

    static void step(String name, Step step) {
        String outcome;
        try {
            outcome = step.run() ? "\"ok\": true" : "\"ok\": false";
        } catch (Exception e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null
                    ? e.getCause() : e;
            outcome = "\"error\": \"" + (cause.getClass().getSimpleName() + ": "
                    + cause.getMessage()).replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
        }
        System.out.println("{\"step\": \"" + name + "\", " + outcome + "}");
        System.out.flush();
    }
}

// Calls the methods of Apache Kafka 4.4's Java Admin client (org.apache.kafka.clients.admin.Admin),
// one scenario at a time, for tests/test_admin_client_java.py.
//
// Single file, compiled with javac against the kafka-clients 4.4.0 jars (tests/clients/admin.py).
// Usage: java -cp <jars>:<classes> AdminCalls <scenario> <bootstrap> [key=value ...]
//   bare key=value arguments are client properties, given to the Admin (and to the producer or
//   consumer a scenario uses): security settings, for instance.
//
// Each Admin call prints one line, in call order:
//   {"call":"<Admin method>","result":<what a user reads of its result>}
//   {"call":"<Admin method>","error":"<the exception's simple class name>"}
// A failure outside an Admin call (a producer, a consumer): {"error":..,"message":..} and exit
// code 2. Every Admin call is bounded by default.api.timeout.ms (30 s). Lists of topics and
// partitions leave out the internal topics (__consumer_offsets, __transaction_state): a broker
// makes them when a coordinator is first used, so whether they show depends on test order.
//
// Scenarios (each uses the topic "events", one partition, that the test's broker has):
//   topics        createTopics, listTopics, describeTopics (by name and by id), createPartitions,
//                 deleteTopics (by name and by id)
//   configs       describeConfigs, incrementalAlterConfigs, listConfigResources,
//                 listClientMetricsResources
//   cluster       describeCluster, describeFeatures, describeMetadataQuorum, describeLogDirs,
//                 describeReplicaLogDirs, alterReplicaLogDirs
//   records       (after producing 3 records) listOffsets, deleteRecords, electLeaders,
//                 alterPartitionReassignments, listPartitionReassignments
//   groups        a static member of group "members" (group.instance.id "i1") and the offsets of
//                 group "offsets": listGroups, listConsumerGroups, describeConsumerGroups,
//                 describeClassicGroups, removeMembersFromConsumerGroup,
//                 alterConsumerGroupOffsets, listConsumerGroupOffsets,
//                 deleteConsumerGroupOffsets, deleteConsumerGroups
//   transactions  a transactional producer "java-admin-tx" with an open transaction: listTransactions,
//                 describeTransactions, describeProducers, abortTransaction, fenceProducers
//                 (then the producer's commitTransaction fails), forceTerminateTransaction
//   scram         alterUserScramCredentials, describeUserScramCredentials
//   acls          createAcls, describeAcls, deleteAcls
//   tokens        createDelegationToken, describeDelegationToken, renewDelegationToken,
//                 expireDelegationToken (the Admin must log in over SASL: give its props)
//   quotas        alterClientQuotas, describeClientQuotas
//   features      updateFeatures (validate only: each finalized feature at its own level)
//   loggers       describeConfigs and incrementalAlterConfigs of broker 1's loggers: the level of
//                 the logging controller's logger set, then deleted; a level set on a logger
//                 the broker does not list; APPEND to a level

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.function.Predicate;

import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ClassicGroupDescription;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.DescribeProducersResult.PartitionProducerState;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class AdminCalls {
    private static final PrintStream OUT =
            new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    private static final String TOPIC = "events";
    private static final TopicPartition EVENTS_0 = new TopicPartition(TOPIC, 0);
    private static Properties props;

    public static void main(String[] argv) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        int code = 0;
        props = new Properties();
        props.setProperty("bootstrap.servers", argv[1]);
        for (int i = 2; i < argv.length; i++) {
            String[] kv = argv[i].split("=", 2);
            props.setProperty(kv[0], kv[1]);
        }
        Properties adminProps = only(AdminClientConfig.configNames());
        adminProps.setProperty(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        try (Admin admin = Admin.create(adminProps)) {
            switch (argv[0]) {
                case "topics": topics(admin); break;
                case "configs": configs(admin); break;
                case "cluster": cluster(admin); break;
                case "records": records(admin); break;
                case "groups": groups(admin); break;
                case "transactions": transactions(admin); break;
                case "scram": scram(admin); break;
                case "acls": acls(admin); break;
                case "tokens": tokens(admin); break;
                case "quotas": quotas(admin); break;
                case "features": features(admin); break;
                case "loggers": loggers(admin); break;
                default: throw new IllegalArgumentException("unknown scenario: " + argv[0]);
            }
        } catch (Throwable t) {
            emit(obj("error", t.getClass().getSimpleName(), "message", String.valueOf(t.getMessage())));
            code = 2;
        }
        OUT.flush();
        System.exit(code);
    }

    // ------------------------------------------------------------------ scenarios

    static void topics(Admin admin) {
        NewTopic orders = new NewTopic("orders", 2, (short) 1).configs(Map.of("retention.ms", "100000"));
        Uuid[] id = new Uuid[1];
        call("createTopics", () -> {
            CreateTopicsResult r = admin.createTopics(List.of(orders));
            id[0] = r.topicId("orders").get();
            return obj("partitions", r.numPartitions("orders").get(),
                    "replicationFactor", r.replicationFactor("orders").get(),
                    "retention.ms", r.config("orders").get().get("retention.ms").value());
        });
        call("createTopics", () -> admin.createTopics(List.of(orders)).all().get());
        call("listTopics", () -> new TreeMap<>(admin.listTopics().namesToListings().get()).keySet());
        call("describeTopics", () -> topic(admin.describeTopics(List.of("orders")).allTopicNames().get().get("orders")));
        call("describeTopics", () -> topic(admin.describeTopics(TopicCollection.ofTopicIds(List.of(id[0])))
                .allTopicIds().get().get(id[0])));
        call("describeTopics", () -> admin.describeTopics(List.of("missing")).allTopicNames().get());
        call("createPartitions", () -> admin.createPartitions(Map.of("orders", NewPartitions.increaseTo(3))).all().get());
        call("createPartitions", () -> admin.createPartitions(Map.of("orders", NewPartitions.increaseTo(2))).all().get());
        eventually("describeTopics", () -> topic(admin.describeTopics(List.of("orders")).allTopicNames().get().get("orders")),
                r -> ((List<?>) ((Map<?, ?>) r).get("partitions")).size() == 3);
        call("deleteTopics", () -> admin.deleteTopics(TopicCollection.ofTopicIds(List.of(id[0]))).all().get());
        call("deleteTopics", () -> admin.deleteTopics(List.of("orders")).all().get());
        eventually("listTopics", () -> new TreeMap<>(admin.listTopics().namesToListings().get()).keySet(),
                r -> !((Set<?>) r).contains("orders"));
    }

    static void configs(Admin admin) {
        ConfigResource events = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
        call("describeConfigs", () -> entry(admin.describeConfigs(List.of(events)).all().get().get(events), "retention.ms"));
        call("incrementalAlterConfigs", () -> admin.incrementalAlterConfigs(Map.of(events, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "100000"), AlterConfigOp.OpType.SET)))).all().get());
        eventually("describeConfigs", () -> entry(admin.describeConfigs(List.of(events)).all().get().get(events), "retention.ms"),
                r -> "100000".equals(((Map<?, ?>) r).get("value")));
        call("incrementalAlterConfigs", () -> admin.incrementalAlterConfigs(Map.of(events, List.of(
                new AlterConfigOp(new ConfigEntry("no.such.config", "1"), AlterConfigOp.OpType.SET)))).all().get());
        call("listConfigResources", () -> {
            List<String> found = new ArrayList<>();
            for (ConfigResource r : admin.listConfigResources(Set.of(ConfigResource.Type.TOPIC),
                    new org.apache.kafka.clients.admin.ListConfigResourcesOptions()).all().get()) {
                if (!r.name().startsWith("__")) { // made on a coordinator's first use: listed or not by test order
                    found.add(r.type() + ":" + r.name());
                }
            }
            found.sort(null);
            return found;
        });
        call("listClientMetricsResources", () -> {
            @SuppressWarnings("deprecation")
            Collection<?> all = admin.listClientMetricsResources().all().get();
            return all.size();
        });
    }

    static void loggers(Admin admin) {
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER_LOGGER, "1");
        String controller = "org.apache.kafka.server.logger.LoggingController";
        Body levels = () -> {
            Map<String, Object> found = new TreeMap<>();
            for (ConfigEntry e : admin.describeConfigs(List.of(broker)).all().get().get(broker).entries()) {
                found.put(e.name(), e.value() + " " + e.source());
            }
            return found;
        };
        call("describeConfigs", levels);
        call("incrementalAlterConfigs", () -> admin.incrementalAlterConfigs(Map.of(broker, List.of(
                new AlterConfigOp(new ConfigEntry(controller, "DEBUG"), AlterConfigOp.OpType.SET)))).all().get());
        call("describeConfigs", levels);
        call("incrementalAlterConfigs", () -> admin.incrementalAlterConfigs(Map.of(broker, List.of(
                new AlterConfigOp(new ConfigEntry(controller, null), AlterConfigOp.OpType.DELETE)))).all().get());
        call("describeConfigs", levels);
        call("incrementalAlterConfigs", () -> admin.incrementalAlterConfigs(Map.of(broker, List.of(
                new AlterConfigOp(new ConfigEntry("kafka.server.ReplicaManager", "DEBUG"), AlterConfigOp.OpType.SET)))).all().get());
        call("incrementalAlterConfigs", () -> admin.incrementalAlterConfigs(Map.of(broker, List.of(
                new AlterConfigOp(new ConfigEntry("root", "DEBUG"), AlterConfigOp.OpType.APPEND)))).all().get());
    }

    static void cluster(Admin admin) {
        call("describeCluster", () -> {
            DescribeClusterResult r = admin.describeCluster();
            List<Object> nodes = new ArrayList<>();
            for (Node n : r.nodes().get()) {
                nodes.add(n.id());
            }
            return obj("nodes", nodes, "controller", r.controller().get().id(),
                    "clusterIdLength", r.clusterId().get().length());
        });
        call("describeFeatures", () -> new TreeMap<>(
                admin.describeFeatures().featureMetadata().get().finalizedFeatures()).keySet());
        call("describeMetadataQuorum", () -> {
            var q = admin.describeMetadataQuorum().quorumInfo().get();
            List<Object> voters = new ArrayList<>();
            q.voters().forEach(v -> voters.add(v.replicaId()));
            return obj("leader", q.leaderId(), "voters", voters);
        });
        String[] dir = new String[1];
        call("describeLogDirs", () -> {
            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(1)).allDescriptions().get().get(1);
            dir[0] = dirs.keySet().iterator().next();
            LogDirDescription d = dirs.get(dir[0]);
            return obj("dirs", dirs.size(), "error", d.error() == null ? null : d.error().getClass().getSimpleName(),
                    "replicas", userPartitions(d.replicaInfos().keySet()));
        });
        TopicPartitionReplica replica = new TopicPartitionReplica(TOPIC, 0, 1);
        call("describeReplicaLogDirs", () -> {
            var info = admin.describeReplicaLogDirs(List.of(replica)).all().get().get(replica);
            return obj("current", dir[0].equals(info.getCurrentReplicaLogDir()), "future",
                    info.getFutureReplicaLogDir());
        });
        call("alterReplicaLogDirs", () -> admin.alterReplicaLogDirs(Map.of(replica, dir[0])).all().get());
        call("alterReplicaLogDirs", () -> admin.alterReplicaLogDirs(
                Map.of(replica, "/no/such/dir")).all().get());
    }

    static void records(Admin admin) throws Exception {
        produce(3);
        call("listOffsets", () -> offsets(admin));
        call("deleteRecords", () -> admin.deleteRecords(Map.of(EVENTS_0, RecordsToDelete.beforeOffset(2)))
                .lowWatermarks().get(EVENTS_0).get().lowWatermark());
        call("deleteRecords", () -> admin.deleteRecords(Map.of(EVENTS_0, RecordsToDelete.beforeOffset(9)))
                .all().get());
        call("listOffsets", () -> offsets(admin));
        call("electLeaders", () -> {
            Map<String, Object> found = new TreeMap<>();
            admin.electLeaders(ElectionType.PREFERRED, Set.of(EVENTS_0)).partitions().get().forEach(
                    (tp, e) -> found.put(tp.toString(), e.map(x -> x.getClass().getSimpleName()).orElse(null)));
            return found;
        });
        call("alterPartitionReassignments", () -> admin.alterPartitionReassignments(Map.of(
                EVENTS_0, Optional.of(new NewPartitionReassignment(List.of(1))))).all().get());
        call("alterPartitionReassignments", () -> admin.alterPartitionReassignments(Map.of(
                EVENTS_0, Optional.of(new NewPartitionReassignment(List.of(7))))).all().get());
        call("listPartitionReassignments", () -> admin.listPartitionReassignments().reassignments().get().size());
    }

    static void groups(Admin admin) throws Exception {
        produce(3);
        Properties p = only(ConsumerConfig.configNames());
        p.setProperty(ConsumerConfig.GROUP_ID_CONFIG, "members");
        p.setProperty(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "i1");
        p.setProperty(ConsumerConfig.CLIENT_ID_CONFIG, "c1");
        p.setProperty(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.setProperty(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.setProperty(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.setProperty(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(TOPIC));
            long deadline = System.currentTimeMillis() + 30000;
            int polled = 0;
            while (polled < 3 && System.currentTimeMillis() < deadline) {
                polled += consumer.poll(Duration.ofMillis(200)).count();
            }
            consumer.commitSync();
            call("listGroups", () -> {
                List<Object> found = new ArrayList<>();
                for (GroupListing g : admin.listGroups().all().get()) {
                    found.add(obj("group", g.groupId(), "type", g.type().map(Object::toString).orElse(null),
                            "protocol", g.protocol(), "state", g.groupState().map(Object::toString).orElse(null)));
                }
                return found;
            });
            call("describeConsumerGroups", () -> {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of("members")).all().get().get("members");
                List<Object> members = new ArrayList<>();
                for (MemberDescription m : d.members()) {
                    members.add(obj("instance", m.groupInstanceId().orElse(null), "client", m.clientId(),
                            "assignment", m.assignment().topicPartitions().toString()));
                }
                return obj("state", d.groupState().toString(), "type", d.type().toString(),
                        "assignor", d.partitionAssignor(), "simple", d.isSimpleConsumerGroup(),
                        "coordinator", d.coordinator().id(), "members", members);
            });
            call("describeClassicGroups", () -> {
                ClassicGroupDescription d = admin.describeClassicGroups(List.of("members")).all().get().get("members");
                List<Object> members = new ArrayList<>();
                for (MemberDescription m : d.members()) {
                    members.add(obj("instance", m.groupInstanceId().orElse(null), "client", m.clientId()));
                }
                return obj("state", d.state().toString(), "protocol", d.protocol(),
                        "protocolData", d.protocolData(), "members", members);
            });
            call("removeMembersFromConsumerGroup", () -> admin.removeMembersFromConsumerGroup("members",
                    new RemoveMembersFromConsumerGroupOptions(List.of(new MemberToRemove("i1")))).all().get());
            call("removeMembersFromConsumerGroup", () -> admin.removeMembersFromConsumerGroup("members",
                    new RemoveMembersFromConsumerGroupOptions(List.of(new MemberToRemove("i2")))).all().get());
            call("listConsumerGroupOffsets", () -> committed(admin, "members"));
        }
        call("listConsumerGroups", () -> {
            List<Object> found = new ArrayList<>();
            @SuppressWarnings("deprecation")
            Collection<ConsumerGroupListing> all = admin.listConsumerGroups().all().get();
            for (ConsumerGroupListing g : all) {
                found.add(obj("group", g.groupId(), "state", g.groupState().map(Object::toString).orElse(null),
                        "simple", g.isSimpleConsumerGroup()));
            }
            return found;
        });
        call("alterConsumerGroupOffsets", () -> admin.alterConsumerGroupOffsets("offsets",
                Map.of(EVENTS_0, new OffsetAndMetadata(2, "note"))).all().get());
        call("listConsumerGroupOffsets", () -> committed(admin, "offsets"));
        call("alterConsumerGroupOffsets", () -> admin.alterConsumerGroupOffsets("offsets",
                Map.of(new TopicPartition("missing", 0), new OffsetAndMetadata(1))).all().get());
        call("deleteConsumerGroupOffsets", () -> admin.deleteConsumerGroupOffsets("offsets", Set.of(EVENTS_0)).all().get());
        call("listConsumerGroupOffsets", () -> committed(admin, "offsets"));
        call("deleteConsumerGroups", () -> admin.deleteConsumerGroups(List.of("members", "offsets")).all().get());
        call("deleteConsumerGroups", () -> admin.deleteConsumerGroups(List.of("members")).all().get());
        call("describeConsumerGroups", () -> admin.describeConsumerGroups(List.of("members")).all().get()
                .get("members").groupState().toString());
    }

    static void transactions(Admin admin) throws Exception {
        Properties p = only(ProducerConfig.configNames());
        p.setProperty(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "java-admin-tx");
        p.setProperty(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.setProperty(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, "v")).get();
            // a session's earlier tests may have left transactional ids on the real broker
            call("listTransactions", () -> transactions(admin, new ListTransactionsOptions()
                    .filterOnTransactionalIdPattern("java-admin-.*")));
            call("listTransactions", () -> transactions(admin, new ListTransactionsOptions()
                    .filterOnTransactionalIdPattern("java-admin-.*")
                    .filterStates(List.of(TransactionState.PREPARE_COMMIT))));
            long[] producerId = new long[1];
            call("describeTransactions", () -> {
                TransactionDescription d = admin.describeTransactions(List.of("java-admin-tx")).all().get().get("java-admin-tx");
                producerId[0] = d.producerId();
                return obj("coordinator", d.coordinatorId(), "state", d.state().toString(),
                        "epoch", d.producerEpoch(), "timeoutMs", d.transactionTimeoutMs(),
                        "started", d.transactionStartTimeMs().isPresent(),
                        "partitions", d.topicPartitions().toString());
            });
            call("describeTransactions", () -> admin.describeTransactions(List.of("nobody")).all().get());
            ProducerState[] state = new ProducerState[1];
            call("describeProducers", () -> {
                PartitionProducerState s = admin.describeProducers(List.of(EVENTS_0)).all().get().get(EVENTS_0);
                state[0] = s.activeProducers().get(0);
                return producers(s, producerId[0]);
            });
            call("abortTransaction", () -> admin.abortTransaction(new AbortTransactionSpec(EVENTS_0,
                    state[0].producerId(), (short) state[0].producerEpoch(),
                    state[0].coordinatorEpoch().orElse(-1))).all().get());
            call("describeProducers", () -> producers(
                    admin.describeProducers(List.of(EVENTS_0)).all().get().get(EVENTS_0), producerId[0]));
            call("fenceProducers", () -> admin.fenceProducers(List.of("java-admin-tx")).all().get());
            String fenced;
            try {
                producer.commitTransaction();
                fenced = null;
            } catch (Exception e) {
                fenced = e.getClass().getSimpleName();
            }
            emit(obj("commitTransaction", fenced));
            call("forceTerminateTransaction", () -> admin.forceTerminateTransaction("java-admin-tx").result().get());
            call("describeTransactions", () -> {
                TransactionDescription d = admin.describeTransactions(List.of("java-admin-tx")).all().get().get("java-admin-tx");
                return obj("state", d.state().toString(), "epochBumped", d.producerEpoch() > state[0].producerEpoch());
            });
        }
    }

    static void scram(Admin admin) {
        ScramCredentialInfo sha256 = new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192);
        ScramCredentialInfo sha512 = new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096);
        call("alterUserScramCredentials", () -> admin.alterUserScramCredentials(List.of(
                new UserScramCredentialUpsertion("carol", sha256, "secret"))).all().get());
        call("alterUserScramCredentials", () -> admin.alterUserScramCredentials(List.of(
                new UserScramCredentialUpsertion("carol", sha512, "secret"))).all().get());
        eventually("describeUserScramCredentials", () -> scramOf(admin, "carol"), r -> r instanceof List && ((List<?>) r).size() == 2);
        call("alterUserScramCredentials", () -> admin.alterUserScramCredentials(List.of(
                new UserScramCredentialDeletion("carol", ScramMechanism.SCRAM_SHA_256))).all().get());
        eventually("describeUserScramCredentials", () -> scramOf(admin, "carol"), r -> r instanceof List && ((List<?>) r).size() == 1);
        call("alterUserScramCredentials", () -> admin.alterUserScramCredentials(List.of(
                new UserScramCredentialDeletion("carol", ScramMechanism.SCRAM_SHA_256))).all().get());
        call("alterUserScramCredentials", () -> admin.alterUserScramCredentials(List.of(
                new UserScramCredentialDeletion("carol", ScramMechanism.SCRAM_SHA_512))).all().get());
        eventually("describeUserScramCredentials", () -> scramOf(admin, "carol"), r -> r instanceof Exception);
    }

    static void acls(Admin admin) throws Exception {
        AclBinding read = new AclBinding(new ResourcePattern(ResourceType.TOPIC, TOPIC, PatternType.LITERAL),
                new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));
        AclBinding write = new AclBinding(new ResourcePattern(ResourceType.GROUP, "g", PatternType.PREFIXED),
                new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));
        call("createAcls", () -> admin.createAcls(List.of(read, write)).all().get());
        AclBindingFilter alices = new AclBindingFilter(
                org.apache.kafka.common.resource.ResourcePatternFilter.ANY,
                new org.apache.kafka.common.acl.AccessControlEntryFilter("User:alice", null, AclOperation.ANY,
                        AclPermissionType.ANY));
        eventually("describeAcls", () -> acls(admin.describeAcls(alices).values().get()), r -> ((List<?>) r).size() == 2);
        call("deleteAcls", () -> acls(admin.deleteAcls(List.of(read.toFilter())).all().get()));
        eventually("describeAcls", () -> acls(admin.describeAcls(alices).values().get()), r -> ((List<?>) r).size() == 1);
        call("deleteAcls", () -> acls(admin.deleteAcls(List.of(alices)).all().get()));
    }

    /** Only the token this scenario makes is looked at: the session's broker may keep earlier tests' tokens. */
    static void tokens(Admin admin) {
        byte[][] hmac = new byte[1][];
        String[] id = new String[1];
        call("createDelegationToken", () -> {
            var t = admin.createDelegationToken().delegationToken().get();
            hmac[0] = t.hmac();
            id[0] = t.tokenInfo().tokenId();
            return obj("owner", t.tokenInfo().owner().toString(), "renewers", t.tokenInfo().renewers().size());
        });
        eventually("describeDelegationToken", () -> {
            List<Object> found = new ArrayList<>();
            for (var t : admin.describeDelegationToken().delegationTokens().get()) {
                if (t.tokenInfo().tokenId().equals(id[0])) found.add(t.tokenInfo().owner().toString());
            }
            return found;
        }, r -> r instanceof List && ((List<?>) r).size() == 1);
        call("renewDelegationToken", () -> admin.renewDelegationToken(hmac[0]).expiryTimestamp().get() > 0);
        call("renewDelegationToken", () -> admin.renewDelegationToken("forged".getBytes(StandardCharsets.UTF_8))
                .expiryTimestamp().get());
        call("expireDelegationToken", () -> admin.expireDelegationToken(hmac[0]).expiryTimestamp().get() > 0);
        eventually("describeDelegationToken", () -> admin.describeDelegationToken().delegationTokens().get().stream()
                .filter(t -> t.tokenInfo().tokenId().equals(id[0])).count(),
                r -> Long.valueOf(0).equals(r));
    }

    static void quotas(Admin admin) {
        ClientQuotaEntity c1 = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "c1"));
        call("alterClientQuotas", () -> admin.alterClientQuotas(List.of(new ClientQuotaAlteration(c1,
                List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1024.0))))).all().get());
        eventually("describeClientQuotas", () -> {
            Map<String, Object> found = new TreeMap<>();
            admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get().forEach(
                    (e, q) -> found.put(new TreeMap<>(e.entries()).toString(), new TreeMap<>(q)));
            return found;
        }, r -> r instanceof Map && !((Map<?, ?>) r).isEmpty());
        call("alterClientQuotas", () -> admin.alterClientQuotas(List.of(new ClientQuotaAlteration(c1,
                List.of(new ClientQuotaAlteration.Op("producer_byte_rate", null))))).all().get());
        eventually("describeClientQuotas", () -> admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get().size(),
                r -> Integer.valueOf(0).equals(r));
    }

    static void features(Admin admin) throws Exception {
        Map<String, FeatureUpdate> same = new TreeMap<>();
        admin.describeFeatures().featureMetadata().get().finalizedFeatures().forEach((name, range) ->
                same.put(name, new FeatureUpdate(range.maxVersionLevel(), FeatureUpdate.UpgradeType.UPGRADE)));
        call("updateFeatures", () -> admin.updateFeatures(same, new UpdateFeaturesOptions().validateOnly(true))
                .all().get());
    }

    // ------------------------------------------------------------------ helpers

    interface Body {
        Object run() throws Exception;
    }

    /** Runs one Admin call and prints its line: its result, or its exception's simple name. */
    static Object call(String method, Body body) {
        try {
            Object result = body.run();
            emit(obj("call", method, "result", result));
            return result;
        } catch (Throwable t) {
            Throwable e = t;
            while (e instanceof ExecutionException && e.getCause() != null) {
                e = e.getCause();
            }
            emit(obj("call", method, "error", e.getClass().getSimpleName()));
            return null;
        }
    }

    /**
     * As call, for a describe that follows a change: Apache Kafka answers it from the broker's
     * copy of the metadata, which shows the change a moment later. Calls again (every 100 ms,
     * up to 15 s) until {@code shows} holds for the result, and prints the last answer.
     */
    static void eventually(String method, Body body, Predicate<Object> shows) {
        long deadline = System.currentTimeMillis() + 15000;
        while (true) {
            Object result;
            try {
                result = body.run();
            } catch (Throwable t) {
                result = t;
            }
            if (shows.test(result) || System.currentTimeMillis() > deadline) {
                Object last = result;
                call(method, () -> {
                    if (last instanceof Exception) {
                        throw (Exception) last;
                    }
                    return last;
                });
                return;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    static Properties only(Set<String> names) {
        Properties p = new Properties();
        for (String k : props.stringPropertyNames()) {
            if (names.contains(k)) {
                p.setProperty(k, props.getProperty(k));
            }
        }
        return p;
    }

    static void produce(int count) throws Exception {
        Properties p = only(ProducerConfig.configNames());
        p.setProperty(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.setProperty(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(TOPIC, 0, 1000L * (i + 1), "k" + i, "v" + i)).get();
            }
        }
    }

    /** The partitions of topics a user made, without the internal ones (__consumer_offsets...). */
    static List<String> userPartitions(Collection<TopicPartition> partitions) {
        List<String> found = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            if (!tp.topic().startsWith("__")) {
                found.add(tp.toString());
            }
        }
        found.sort(null);
        return found;
    }

    static Map<String, Object> topic(TopicDescription d) {
        List<Object> partitions = new ArrayList<>();
        for (TopicPartitionInfo p : d.partitions()) {
            partitions.add(obj("partition", p.partition(), "leader", p.leader().id(),
                    "replicas", p.replicas().size(), "isr", p.isr().size()));
        }
        return obj("name", d.name(), "internal", d.isInternal(), "partitions", partitions);
    }

    static Map<String, Object> entry(Config config, String name) {
        ConfigEntry e = config.get(name);
        return obj("name", e.name(), "value", e.value(), "source", e.source().toString(),
                "readOnly", e.isReadOnly(), "sensitive", e.isSensitive());
    }

    static Map<String, Object> offsets(Admin admin) throws Exception {
        Map<String, Object> found = new LinkedHashMap<>();
        Map<String, OffsetSpec> specs = new LinkedHashMap<>();
        specs.put("earliest", OffsetSpec.earliest());
        specs.put("latest", OffsetSpec.latest());
        specs.put("maxTimestamp", OffsetSpec.maxTimestamp());
        specs.put("forTimestamp(1500)", OffsetSpec.forTimestamp(1500));
        for (Map.Entry<String, OffsetSpec> s : specs.entrySet()) {
            var info = admin.listOffsets(Map.of(EVENTS_0, s.getValue())).partitionResult(EVENTS_0).get();
            found.put(s.getKey(), List.of(info.offset(), info.timestamp()));
        }
        return found;
    }

    static Map<String, Object> committed(Admin admin, String group) throws Exception {
        Map<String, Object> found = new TreeMap<>();
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().forEach((tp, o) ->
                found.put(tp.toString(), o == null ? null : List.of(o.offset(), o.metadata())));
        return found;
    }

    static List<Object> transactions(Admin admin, ListTransactionsOptions options) throws Exception {
        List<Object> found = new ArrayList<>();
        for (TransactionListing t : admin.listTransactions(options).all().get()) {
            found.add(obj("id", t.transactionalId(), "state", t.state().toString()));
        }
        return found;
    }

    static Map<String, Object> producers(PartitionProducerState s, long producerId) {
        List<Object> found = new ArrayList<>();
        for (ProducerState p : s.activeProducers()) {
            found.add(obj("ours", p.producerId() == producerId, "epoch", p.producerEpoch(),
                    "lastSequence", p.lastSequence(),
                    "txnStartOffset", p.currentTransactionStartOffset().isPresent()
                            ? p.currentTransactionStartOffset().getAsLong() : null));
        }
        return obj("producers", found);
    }

    static Object scramOf(Admin admin, String user) throws Exception {
        UserScramCredentialsDescription d = admin.describeUserScramCredentials(List.of(user)).description(user).get();
        List<Object> found = new ArrayList<>();
        for (ScramCredentialInfo i : d.credentialInfos()) {
            found.add(i.mechanism() + ":" + i.iterations());
        }
        found.sort(null);
        return found;
    }

    static List<Object> acls(Collection<AclBinding> bindings) {
        List<Object> found = new ArrayList<>();
        for (AclBinding b : bindings) {
            found.add(b.pattern().resourceType() + ":" + b.pattern().patternType() + ":" + b.pattern().name()
                    + " " + b.entry().principal() + " " + b.entry().operation() + " " + b.entry().permissionType());
        }
        found.sort(null);
        return found;
    }

    // ------------------------------------------------------------------ JSON

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
        OUT.flush();
    }

    static void json(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof Number || v instanceof Boolean) {
            sb.append(v);
        } else if (v instanceof Map) {
            sb.append('{');
            String sep = "";
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                sb.append(sep);
                sep = ",";
                json(sb, String.valueOf(e.getKey()));
                sb.append(':');
                json(sb, e.getValue());
            }
            sb.append('}');
        } else if (v instanceof Collection) {
            sb.append('[');
            String sep = "";
            for (Object o : (Collection<?>) v) {
                sb.append(sep);
                sep = ",";
                json(sb, o);
            }
            sb.append(']');
        } else {
            String s = v.toString();
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '"' || c == '\\') {
                    sb.append('\\').append(c);
                } else if (c < 0x20) {
                    sb.append(String.format("\\u%04x", (int) c));
                } else {
                    sb.append(c);
                }
            }
            sb.append('"');
        }
    }
}

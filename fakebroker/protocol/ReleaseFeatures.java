// The features a KRaft broker of release 3.3 to 4.4 lists in ApiVersions (v3+), read from that
// release's own kafka-server-common jar: compiled (javac, no class path) and run by
// fakebroker/protocol/releases_importer.py as
//   java -cp <compiled>:kafka-server-common-X.jar:kafka-clients-X.jar:slf4j-api.jar ReleaseFeatures
// It prints "supported<TAB>name<TAB>min<TAB>max" lines, then "finalized<TAB>name<TAB>level"
// lines, each in the order the broker lists them (the iteration order of a java.util.HashMap
// filled as the broker fills it).
//
// Supported (BrokerFeatures.defaultSupportedFeatures): metadata.version from the oldest KRaft
// metadata version (MINIMUM_KRAFT_VERSION; 4.x: MINIMUM_VERSION) to the newest production one
// (LATEST_PRODUCTION; 3.3-3.6: latest()), then every production feature (Features, 3.8 on;
// Feature, 4.x)
// from its minimumProduction() to its latestProduction(), when that is above 0.
// Finalized (a node freshly formatted with that release's defaults, --standalone from 3.9): every
// production feature at its default level for the newest production metadata version (what
// kafka-storage format writes: defaultLevel, 4.x; defaultValue, 3.8-3.9) when above 0, then
// metadata.version at the newest production level. A feature's default can be below its
// latestProduction(): 4.0 leaves eligible.leader.replicas.version at 0, 4.1 share.version.
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class ReleaseFeatures {
    public static void main(String[] args) throws Exception {
        Class<?> versions = Class.forName("org.apache.kafka.server.common.MetadataVersion");
        Object oldest = staticField(versions, "MINIMUM_VERSION");
        if (oldest == null) oldest = staticField(versions, "MINIMUM_KRAFT_VERSION");
        Object newest = staticField(versions, "LATEST_PRODUCTION");
        if (newest == null) newest = versions.getMethod("latest").invoke(null);
        Method level = versions.getMethod("featureLevel");
        short newestLevel = (Short) level.invoke(newest);

        Map<String, short[]> supported = new HashMap<>();
        Map<String, Short> finalized = new HashMap<>();
        supported.put("metadata.version", new short[] {(Short) level.invoke(oldest), newestLevel});
        List<?> features = productionFeatures("org.apache.kafka.server.common.Feature");  // 4.x
        if (features == null) {  // 3.8-3.9 (3.6-3.7 have another class of that name)
            features = productionFeatures("org.apache.kafka.server.common.Features");
        }
        if (features == null) features = List.of();  // before 3.8: only metadata.version
        for (Object feature : features) {
            Class<?> type = feature.getClass();
            String name = (String) type.getMethod("featureName").invoke(feature);
            short latest = (Short) type.getMethod("latestProduction").invoke(feature);
            short minimum = (Short) type.getMethod("minimumProduction").invoke(feature);
            short initial = (Short) defaultLevel(type, versions).invoke(feature, newest);
            if (latest > 0) supported.put(name, new short[] {minimum, latest});
            if (initial > 0) finalized.put(name, initial);
        }
        finalized.put("metadata.version", newestLevel);
        for (Map.Entry<String, short[]> entry : supported.entrySet()) {
            System.out.println("supported\t" + entry.getKey() + "\t" + entry.getValue()[0] + "\t"
                    + entry.getValue()[1]);
        }
        for (Map.Entry<String, Short> entry : finalized.entrySet()) {
            System.out.println("finalized\t" + entry.getKey() + "\t" + entry.getValue());
        }
    }

    private static Method defaultLevel(Class<?> feature, Class<?> versions) throws Exception {
        try {
            return feature.getMethod("defaultLevel", versions);  // 4.x
        } catch (NoSuchMethodException absent) {
            return feature.getMethod("defaultValue", versions);  // 3.8-3.9
        }
    }

    private static List<?> productionFeatures(String className) throws Exception {
        try {
            return (List<?>) staticField(Class.forName(className), "PRODUCTION_FEATURES");
        } catch (ClassNotFoundException absent) {
            return null;
        }
    }

    private static Object staticField(Class<?> type, String name) throws Exception {
        try {
            return type.getField(name).get(null);
        } catch (NoSuchFieldException absent) {
            return null;
        }
    }
}

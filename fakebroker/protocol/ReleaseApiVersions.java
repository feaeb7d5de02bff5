// What a Kafka broker of release 0.10.0 to 2.7 lists in its ApiVersions answer, read from that
// release's own kafka-clients jar: compiled (javac, no class path) and run by
// fakebroker/protocol/releases_importer.py as
//   java -cp <compiled>:kafka-clients-X.jar:slf4j-api.jar ReleaseApiVersions
// It prints one line per listed API, "key<TAB>name<TAB>min<TAB>max", in the order listed.
//
// Those brokers answer ApiVersions with the clients jar's default answer, built from
// ApiKeys.values() (2.7: those whose isEnabled is set) with each key's oldest and latest
// version: ApiVersionsResponse's apiVersionsResponse() (0.10.0-0.10.1), its public
// API_VERSIONS_RESPONSE (0.10.2-0.11.0), defaultApiVersionsResponse() (1.0-2.3) or
// DEFAULT_API_VERSIONS_RESPONSE (2.4-2.7, its entries in data.apiKeys()); 0.11.0 on keep the
// keys whose minRequiredInterBrokerMagic the current message format meets: all of them.
// Reflection, because those names changed between releases.
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Collection;

public class ReleaseApiVersions {
    public static void main(String[] args) throws Exception {
        Class<?> responses = Class.forName("org.apache.kafka.common.requests.ApiVersionsResponse");
        Object response;
        try {
            response = responses.getMethod("defaultApiVersionsResponse").invoke(null);
        } catch (NoSuchMethodException older) {
            response = staticField(responses, "DEFAULT_API_VERSIONS_RESPONSE");
            if (response == null) response = staticField(responses, "API_VERSIONS_RESPONSE");
            if (response == null) response = responses.getMethod("apiVersionsResponse").invoke(null);
        }
        Collection<?> listed;
        try {
            listed = (Collection<?>) responses.getMethod("apiVersions").invoke(response);
        } catch (NoSuchMethodException generated) {  // 2.4 on: a public field (2.7: a method)
            Object data;
            try {
                data = responses.getField("data").get(response);
            } catch (NoSuchFieldException method) {
                data = responses.getMethod("data").invoke(response);
            }
            listed = (Collection<?>) data.getClass().getMethod("apiKeys").invoke(data);
        }
        Class<?> apiKeys = Class.forName("org.apache.kafka.common.protocol.ApiKeys");
        Method forId = apiKeys.getMethod("forId", int.class);
        for (Object entry : listed) {
            short key = field(entry, "apiKey");
            String name = (String) apiKeys.getField("name").get(forId.invoke(null, (int) key));
            System.out.println(key + "\t" + name + "\t" + field(entry, "minVersion") + "\t"
                    + field(entry, "maxVersion"));
        }
    }

    private static Object staticField(Class<?> type, String name) throws Exception {
        try {
            return type.getField(name).get(null);
        } catch (NoSuchFieldException absent) {
            return null;
        }
    }

    // A public field (before 2.4) or the generated accessor of the same name (2.4 on).
    private static short field(Object entry, String name) throws Exception {
        try {
            Field f = entry.getClass().getField(name);
            return f.getShort(entry);
        } catch (NoSuchFieldException generated) {
            return (Short) entry.getClass().getMethod(name).invoke(entry);
        }
    }
}

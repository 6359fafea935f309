// Records what real Siddhi 5.1.33 with siddhi-store-rdbms does with @persistedAggregation: runs one
// phase of a recording (record.py drives the phases and dumps the tables between them) and prints
// Siddhi's answers to the phase's on-demand queries. Used to make the fixtures of
// tests/engine/aggregation/test_persisted.py; never shipped, never run in CI.
//
// A copy of tests/engine/stores/siddhi_recorded/RdbmsRecorder.java (see there for phase.json) with
// one addition: persisted aggregation needs @store(datasource=...), a datasource the SiddhiManager
// knows (the store and rdbms:cud look it up), its driver class under wso2.datasources (how
// AggregationParser.getDatabaseType picks the SQL templates) and rdbms:cud enabled. phase.json's
// "datasource": {"name", "url", "username", "password", "driver"} sets them up.
import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.siddhi.core.SiddhiAppRuntime;
import io.siddhi.core.SiddhiManager;
import io.siddhi.core.event.Event;
import io.siddhi.core.util.config.InMemoryConfigManager;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.siddhi.query.api.definition.Attribute;

import java.io.FileReader;
import java.io.FileWriter;
import java.io.Writer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class PersistedRecorder {
    private static final Gson GSON = new GsonBuilder().serializeNulls().create();

    public static void main(String[] args) throws Exception {
        JsonObject phase;
        try (FileReader r = new FileReader(args[0])) {
            phase = new JsonParser().parse(r).getAsJsonObject();
        }
        String app = phase.get("app").getAsString();
        String stream = phase.get("stream").getAsString();
        List<SiddhiManager> managers = new ArrayList<>();
        List<SiddhiAppRuntime> runtimes = new ArrayList<>();
        for (JsonElement shard : phase.getAsJsonArray("shards")) {
            SiddhiManager manager = new SiddhiManager();
            Map<String, String> props = new HashMap<>();
            if (!shard.isJsonNull()) {
                props.put("shardId", shard.getAsString());
            }
            JsonObject ds = phase.getAsJsonObject("datasource");
            String dsName = ds.get("name").getAsString();
            Map<String, String> ext = new HashMap<>();
            ext.put("wso2.datasources." + dsName + ".driverClassName", ds.get("driver").getAsString());
            ext.put("rdbms.cud.perform.CUD.operations", "true");
            manager.setConfigManager(new InMemoryConfigManager(ext, null, props));
            HikariConfig hc = new HikariConfig();
            hc.setJdbcUrl(ds.get("url").getAsString());
            hc.setUsername(ds.get("username").getAsString());
            hc.setPassword(ds.get("password").getAsString());
            hc.setDriverClassName(ds.get("driver").getAsString());
            HikariDataSource pool = new HikariDataSource(hc);
            manager.setDataSource(dsName, pool);
            org.osgi.framework.FrameworkUtil.DATASOURCES.put(dsName, pool);
            SiddhiAppRuntime rt = manager.createSiddhiAppRuntime(app);
            rt.start();
            managers.add(manager);
            runtimes.add(rt);
        }
        List<Attribute> attrs = runtimes.get(0).getStreamDefinitionMap().get(stream).getAttributeList();
        for (JsonElement e : phase.getAsJsonArray("events")) {
            JsonArray ev = e.getAsJsonArray();
            JsonArray values = ev.get(2).getAsJsonArray();
            Object[] data = new Object[attrs.size()];
            for (int i = 0; i < data.length; i++) {
                data[i] = convert(values.get(i), attrs.get(i).getType());
            }
            runtimes.get(ev.get(0).getAsInt()).getInputHandler(stream).send(ev.get(1).getAsLong(), data);
        }
        long settle = phase.has("settle_ms") ? phase.get("settle_ms").getAsLong() : 1500;
        Thread.sleep(settle);
        JsonArray answers = new JsonArray();
        for (JsonElement q : phase.getAsJsonArray("queries")) {
            JsonObject a = new JsonObject();
            a.addProperty("query", q.getAsString());
            try {
                Event[] events = runtimes.get(0).query(q.getAsString());
                JsonArray rows = new JsonArray();
                for (Event event : events == null ? new Event[0] : events) {
                    rows.add(GSON.toJsonTree(event.getData()));
                }
                a.add("rows", rows);
                a.add("error", null);
            } catch (RuntimeException ex) {
                a.add("rows", null);
                a.addProperty("error", ex.getClass().getSimpleName() + ": " + ex.getMessage());
            }
            answers.add(a);
        }
        for (SiddhiAppRuntime rt : runtimes) {
            rt.shutdown();
        }
        for (SiddhiManager m : managers) {
            m.shutdown();
        }
        JsonObject out = new JsonObject();
        out.add("answers", answers);
        try (Writer w = new FileWriter(args[1])) {
            GSON.toJson(out, w);
        }
        System.exit(0);  // Siddhi's and HikariCP's threads may linger
    }

    private static Object convert(JsonElement v, Attribute.Type type) {
        if (v.isJsonNull()) {
            return null;
        }
        switch (type) {
            case INT: return v.getAsInt();
            case LONG: return v.getAsLong();
            case FLOAT: return v.getAsFloat();
            case DOUBLE: return v.getAsDouble();
            case BOOL: return v.getAsBoolean();
            default: return v.getAsString();
        }
    }
}

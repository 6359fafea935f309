// The differential tests' runner: runs SiddhiQL apps on the real Siddhi engine and prints what
// every stream and query callback received, as JSON lines. Used by tests/differential only; it is
// never shipped.
//
// Protocol: one JSON object per line on stdin, one per app:
//   {"id": "...", "app": "...", "streams": ["O"], "queries": ["q1"], "timeout_ms": 10000,
//    "steps": [{"stream": "S", "events": [[ts, [v, ...]], ...]},   // one event: send(ts, data)
//                                                                   // (a null ts: send(data));
//                                                                   // several: send(Event[])
//              {"query": "from T select *"},                        // an on-demand (store) query
//              {"restore": true},      // snapshot, shut down, a new runtime started and restored
//              {"publish": "in", "message": "text"}],               // InMemoryBroker.publish
//    "topics": ["out"]}                                              // InMemoryBroker subscriptions
// Answer: one line per app on stdout, prefixed with "@@DIFF " (so nothing the engine logs is
// taken for an answer):
//   {"id": "...", "error": null | "Class: message", "created": false when the app or a callback
//    was refused (the error is then a creation error),
//    "outputs": [{"cb": "stream:O", "events": [[ts, [..], expired], ...]},
//                {"cb": "query:q1", "ts": t, "in": [[ts, [..]], ...], "out": [...]},
//                {"cb": "ondemand", "events": [[ts, [..]], ...]},
//                {"cb": "topic:out", "events": [[0, [message]]]}]}  // a String as it is, an
//                                        // Event or Event[] (passThrough) as rows, bytes as base64
// A value that is a java.util.Set is written {"$set": [members...]}: lists keep their order in
// the comparison, a set's members do not (tests/differential/harness.py same_value).
// An app that runs past its time limit is answered {"error": "timeout"} and the runner exits
// (status 3), since its thread cannot be stopped; the caller starts a new runner.
import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.siddhi.core.SiddhiAppRuntime;
import io.siddhi.core.SiddhiManager;
import io.siddhi.core.event.Event;
import io.siddhi.core.query.output.callback.QueryCallback;
import io.siddhi.core.stream.input.InputHandler;
import io.siddhi.core.stream.output.StreamCallback;
import io.siddhi.core.util.transport.InMemoryBroker;
import io.siddhi.query.api.definition.AbstractDefinition;
import io.siddhi.query.api.definition.Attribute;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

public final class SiddhiRunner {
    private static final Gson GSON = new GsonBuilder().serializeNulls()
            .serializeSpecialFloatingPointValues().create();

    public static void main(String[] args) throws Exception {
        PrintStream answers = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                "UTF-8");
        System.setOut(System.err);  // whatever the engine prints is not an answer
        SiddhiManager manager = new SiddhiManager();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "differential-app");
            t.setDaemon(true);
            return t;
        });
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonObject request = new JsonParser().parse(line).getAsJsonObject();
            String id = request.has("id") ? request.get("id").getAsString() : "";
            long timeout = request.has("timeout_ms") ? request.get("timeout_ms").getAsLong() : 10000L;
            List<Map<String, Object>> outputs = java.util.Collections.synchronizedList(new ArrayList<>());
            Map<String, Object> answer = new HashMap<>();
            answer.put("id", id);
            answer.put("outputs", outputs);
            answer.put("created", true);
            Future<String> run = worker.submit(() -> runApp(manager, request, outputs, answer));
            try {
                answer.put("error", run.get(timeout, TimeUnit.MILLISECONDS));
            } catch (TimeoutException e) {
                answer.put("error", "timeout");
                answers.println("@@DIFF " + GSON.toJson(answer));
                answers.flush();
                Runtime.getRuntime().halt(3);
            } catch (java.util.concurrent.ExecutionException e) {
                answer.put("error", describe(e.getCause()));
            }
            synchronized (outputs) {
                answers.println("@@DIFF " + GSON.toJson(answer));
            }
            answers.flush();
        }
        Runtime.getRuntime().halt(0);
    }

    // An aggregation writes a closed bucket's rows to its table on a thread of its own
    // (IncrementalExecutor.executorService), so a read right after the bucket closed (in the
    // same send, where a playback timer closes it) may or may not see them. The runner has those
    // writes made on the sending thread instead: the answer is the one a Siddhi user gets once
    // the write has landed, the same on every run.
    private static void writeAggregationTablesInline(SiddhiAppRuntime runtime) {
        try {
            for (Object aggregation : ((Map<?, ?>) field(runtime, "aggregationMap")).values()) {
                for (Object executor : ((Map<?, ?>) field(aggregation, "incrementalExecutorMap")).values()) {
                    java.lang.reflect.Field f = declared(executor.getClass(), "executorService");
                    if (f == null) {
                        continue;
                    }
                    f.setAccessible(true);
                    Object old = f.get(executor);
                    if (old instanceof ExecutorService) {
                        ((ExecutorService) old).shutdown();
                    }
                    f.set(executor, new InlineExecutor());
                }
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot reach the aggregations' table writers: " + e, e);
        }
    }

    private static java.lang.reflect.Field declared(Class<?> type, String name) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            try {
                return c.getDeclaredField(name);
            } catch (NoSuchFieldException e) {
                // a superclass may declare it
            }
        }
        return null;
    }

    private static Object field(Object owner, String name) throws ReflectiveOperationException {
        java.lang.reflect.Field f = declared(owner.getClass(), name);
        if (f == null) {
            throw new NoSuchFieldException(owner.getClass().getName() + "." + name);
        }
        f.setAccessible(true);
        return f.get(owner);
    }

    // Runs each task on the thread that submits it.
    private static final class InlineExecutor extends java.util.concurrent.AbstractExecutorService {
        private volatile boolean down;

        @Override
        public void execute(Runnable task) {
            task.run();
        }

        @Override
        public void shutdown() {
            down = true;
        }

        @Override
        public List<Runnable> shutdownNow() {
            down = true;
            return new ArrayList<>();
        }

        @Override
        public boolean isShutdown() {
            return down;
        }

        @Override
        public boolean isTerminated() {
            return down;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return true;
        }
    }

    private static String describe(Throwable e) {
        String text = e.getClass().getSimpleName() + ": " + e.getMessage();
        // (a failed restore says only that it failed: what failed is its cause)
        if (e.getClass().getSimpleName().equals("CannotRestoreSiddhiAppStateException") && e.getCause() != null) {
            text += " (" + describe(e.getCause()) + ")";
        }
        return text;
    }

    // Adds the request's stream and query callbacks to ``runtime``, writing into ``outputs``.
    private static void listen(SiddhiAppRuntime runtime, JsonObject request, List<Map<String, Object>> outputs) {
        if (request.has("streams")) {
            for (JsonElement s : request.getAsJsonArray("streams")) {
                String name = s.getAsString();
                runtime.addCallback(name, new StreamCallback() {
                    @Override
                    public void receive(Event[] events) {
                        Map<String, Object> out = new HashMap<>();
                        out.put("cb", "stream:" + name);
                        out.put("events", rows(events, true));
                        outputs.add(out);
                    }
                });
            }
        }
        if (request.has("queries")) {
            for (JsonElement q : request.getAsJsonArray("queries")) {
                String name = q.getAsString();
                runtime.addCallback(name, new QueryCallback() {
                    @Override
                    public void receive(long timestamp, Event[] inEvents, Event[] removeEvents) {
                        Map<String, Object> out = new HashMap<>();
                        out.put("cb", "query:" + name);
                        out.put("ts", timestamp);
                        out.put("in", rows(inEvents, false));
                        out.put("out", rows(removeEvents, false));
                        outputs.add(out);
                    }
                });
            }
        }
    }

    private static String runApp(SiddhiManager manager, JsonObject request, List<Map<String, Object>> outputs,
                                 Map<String, Object> answer) {
        SiddhiAppRuntime runtime;
        List<InMemoryBroker.Subscriber> subscribers = new ArrayList<>();
        try {
            runtime = manager.createSiddhiAppRuntime(request.get("app").getAsString());
        } catch (Throwable e) {
            answer.put("created", false);
            return describe(e);
        }
        try {
            try {
                listen(runtime, request, outputs);
            } catch (Throwable e) {  // a callback on a query or stream the app does not have
                answer.put("created", false);
                return describe(e);
            }
            if (request.has("topics")) {
                for (JsonElement t : request.getAsJsonArray("topics")) {
                    subscribers.add(subscriber(t.getAsString(), outputs));
                }
            }
            writeAggregationTablesInline(runtime);
            runtime.start();
            Map<String, InputHandler> handlers = new HashMap<>();
            for (JsonElement stepElement : request.getAsJsonArray("steps")) {
                JsonObject step = stepElement.getAsJsonObject();
                if (step.has("restore")) {
                    // the app snapshotted and shut down, a new runtime of it restored (after its
                    // start, as Siddhi's documentation restores a revision)
                    byte[] snapshot = runtime.snapshot();
                    runtime.shutdown();
                    runtime = manager.createSiddhiAppRuntime(request.get("app").getAsString());
                    listen(runtime, request, outputs);
                    writeAggregationTablesInline(runtime);
                    runtime.start();
                    runtime.restore(snapshot);
                    handlers.clear();
                    continue;
                }
                if (step.has("publish")) {
                    InMemoryBroker.publish(step.get("publish").getAsString(), step.get("message").getAsString());
                    continue;
                }
                if (step.has("query")) {
                    Event[] found = runtime.query(step.get("query").getAsString());
                    Map<String, Object> out = new HashMap<>();
                    out.put("cb", "ondemand");
                    out.put("events", rows(found, false));
                    outputs.add(out);
                    continue;
                }
                String stream = step.get("stream").getAsString();
                InputHandler handler = handlers.computeIfAbsent(stream, runtime::getInputHandler);
                List<Attribute> types = definition(runtime, stream).getAttributeList();
                JsonArray events = step.getAsJsonArray("events");
                Event[] chunk = new Event[events.size()];
                for (int i = 0; i < chunk.length; i++) {
                    JsonArray e = events.get(i).getAsJsonArray();
                    // a null time: the engine's own clock, as InputHandler.send(Object[]) gives
                    long ts = e.get(0).isJsonNull() ? -1 : e.get(0).getAsLong();
                    chunk[i] = new Event(ts < 0 ? System.currentTimeMillis() : ts,
                            values(e.get(1).getAsJsonArray(), types));
                    if (ts < 0 && events.size() == 1) {
                        handler.send(chunk[i].getData());
                        chunk = null;
                        break;
                    }
                }
                if (chunk == null) {
                    continue;
                }
                if (chunk.length == 1) {
                    handler.send(chunk[0].getTimestamp(), chunk[0].getData());
                } else {
                    handler.send(chunk);
                }
            }
            return null;
        } catch (Throwable e) {
            return describe(e);
        } finally {
            runtime.shutdown();
            for (InMemoryBroker.Subscriber sub : subscribers) {
                InMemoryBroker.unsubscribe(sub);
            }
        }
    }

    // What a sink publishes to ``topic``, as a one-row chunk of callback "topic:<topic>".
    private static InMemoryBroker.Subscriber subscriber(String topic, List<Map<String, Object>> outputs) {
        InMemoryBroker.Subscriber sub = new InMemoryBroker.Subscriber() {
            @Override
            public void onMessage(Object message) {
                Map<String, Object> out = new HashMap<>();
                out.put("cb", "topic:" + topic);
                if (message instanceof Event) {
                    out.put("events", rows(new Event[]{(Event) message}, false));
                } else if (message instanceof Event[]) {
                    out.put("events", rows((Event[]) message, false));
                } else {
                    Object text = message instanceof byte[]
                            ? "$bytes:" + java.util.Base64.getEncoder().encodeToString((byte[]) message)
                            : message instanceof java.nio.ByteBuffer
                            ? "$bytes:" + java.util.Base64.getEncoder().encodeToString(
                                    ((java.nio.ByteBuffer) message).array())
                            : String.valueOf(message);
                    List<Object> row = new ArrayList<>();
                    row.add(0);
                    List<Object> data = new ArrayList<>();
                    data.add(text);
                    row.add(data);
                    List<Object> rowsOut = new ArrayList<>();
                    rowsOut.add(row);
                    out.put("events", rowsOut);
                }
                outputs.add(out);
            }

            @Override
            public String getTopic() {
                return topic;
            }
        };
        InMemoryBroker.subscribe(sub);
        return sub;
    }

    private static AbstractDefinition definition(SiddhiAppRuntime runtime, String stream) {
        AbstractDefinition d = runtime.getStreamDefinitionMap().get(stream);
        if (d == null) {
            d = runtime.getWindowDefinitionMap().get(stream);
        }
        if (d == null) {
            d = runtime.getTableDefinitionMap().get(stream);
        }
        if (d == null) {
            throw new IllegalArgumentException("no stream " + stream);
        }
        return d;
    }

    private static Object[] values(JsonArray data, List<Attribute> types) {
        Object[] out = new Object[data.size()];
        for (int i = 0; i < out.length; i++) {
            JsonElement v = data.get(i);
            if (v.isJsonNull()) {
                continue;
            }
            Attribute.Type type = i < types.size() ? types.get(i).getType() : Attribute.Type.OBJECT;
            switch (type) {
                case STRING: out[i] = v.getAsString(); break;
                case INT: out[i] = v.getAsInt(); break;
                case LONG: out[i] = v.getAsLong(); break;
                case FLOAT: out[i] = v.getAsFloat(); break;
                case DOUBLE: out[i] = v.getAsDouble(); break;
                case BOOL: out[i] = v.getAsBoolean(); break;
                default: out[i] = GSON.fromJson(v, Object.class);
            }
        }
        return out;
    }

    private static List<Object> rows(Event[] events, boolean withExpired) {
        List<Object> out = new ArrayList<>();
        if (events == null) {
            return out;
        }
        for (Event e : events) {
            List<Object> row = new ArrayList<>();
            row.add(e.getTimestamp());
            List<Object> data = new ArrayList<>();
            for (Object v : e.getData()) {
                data.add(plain(v));
            }
            row.add(data);
            if (withExpired) {
                row.add(e.isExpired());
            }
            out.add(row);
        }
        return out;
    }

    // Floats print as Java prints them (65.1f is "65.1", not its double's digits); a set as
    // {"$set": [...]} (its members in its own order, which the comparison does not hold it to);
    // an exception (a fault stream's _error) as "$error"; other values as gson writes them.
    private static Object plain(Object v) {
        if (v instanceof Throwable) {
            return "$error";  // a fault stream's _error: the engines' messages are their own
        }
        if (v instanceof java.util.Set) {
            List<Object> members = new ArrayList<>();
            for (Object m : (java.util.Set<?>) v) {
                members.add(plain(m));
            }
            Map<String, Object> set = new HashMap<>();
            set.put("$set", members);
            return set;
        }
        if (v instanceof Float) {
            Float f = (Float) v;
            if (f.isNaN() || f.isInfinite()) {
                return f.toString();
            }
            if (f == 0.0f) {
                return f.doubleValue();  // a BigDecimal has no negative zero: -0.0f would print 0.0
            }
            return new java.math.BigDecimal(f.toString());
        }
        if (v instanceof Double) {
            Double d = (Double) v;
            if (d.isNaN() || d.isInfinite()) {
                return d.toString();
            }
        }
        return v;
    }
}

// The benchmark's Siddhi 5.1.33 runner (python -m tests.bench: the `siddhi` and `siddhi-1` rows).
// Compiled into .cache/siddhi/bench-classes by tests/bench/siddhi/__init__.py; never shipped.
//
//   java SiddhiBench APP_FILE EVENTS_FILE chunked|single CHUNK WARMUP_ROUNDS WARMUP_EVENTS WARMUP_SECONDS OUT_FILE
//
// Reads the app's SiddhiQL and all the events (tests/bench/data.py's rows, written by the Python
// side: int n, then per event writeUTF(symbol), double price, long volume, long ts) into memory,
// then runs untimed rounds over the first WARMUP_EVENTS events (JIT warm-up: WARMUP_ROUNDS of
// them, fewer where they take more than WARMUP_SECONDS together, at least one) and one timed
// round over all the events, each round on a new app runtime. `chunked` sends
// InputHandler.send(Event[]) of CHUNK events (made before the clock starts, as Srota's chunks
// are); `single` sends send(ts, Object[]) per event. A StreamCallback on `Out` keeps the output
// events (as Srota's benchmark callback keeps its rows). After the timed round the outputs go
// to OUT_FILE (int attributes, a type letter each, int count, then per event long timestamp and
// per value a presence byte and the value) and one line to stdout:
//   @@BENCH {"seconds": s, "outputs": k, "rss_before_mb": m, "peak_mb": m, "cpu_seconds": s}
// peak_mb is the process's VmHWM over the timed round (reset before it through
// /proc/self/clear_refs, where the kernel allows it), rss_before_mb its VmRSS before.
import io.siddhi.core.SiddhiAppRuntime;
import io.siddhi.core.SiddhiManager;
import io.siddhi.core.event.Event;
import io.siddhi.core.stream.input.InputHandler;
import io.siddhi.core.stream.output.StreamCallback;
import io.siddhi.query.api.definition.Attribute;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.FileWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class SiddhiBench {
    public static void main(String[] args) throws Exception {
        PrintStream answers = new PrintStream(new FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        System.setOut(System.err);  // whatever the engine prints is not the answer
        String app = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
        Object[][] rows = readEvents(args[1]);
        boolean chunked = args[2].equals("chunked");
        int chunk = Integer.parseInt(args[3]);
        int warmupRounds = Integer.parseInt(args[4]);
        int warmupEvents = Math.min(rows.length, Integer.parseInt(args[5]));
        double warmupSeconds = Double.parseDouble(args[6]);
        String outFile = args[7];

        SiddhiManager manager = new SiddhiManager();
        long warmupStart = System.nanoTime();
        int warmedUp = 0;
        for (int round = 0; round <= warmupRounds; round++) {
            if (round > 0 && (System.nanoTime() - warmupStart) / 1e9 >= warmupSeconds) {
                round = warmupRounds;  // the budget is spent: the timed round
            }
            boolean timed = round == warmupRounds;
            int n = timed ? rows.length : warmupEvents;
            // The inputs are made before the clock starts, anew each round.
            Event[][] chunks = null;
            if (chunked) {
                chunks = new Event[(n + chunk - 1) / chunk][];
                for (int c = 0; c < chunks.length; c++) {
                    int from = c * chunk;
                    int size = Math.min(chunk, n - from);
                    Event[] events = new Event[size];
                    for (int i = 0; i < size; i++) {
                        Object[] r = rows[from + i];
                        events[i] = new Event((Long) r[3], r.clone());
                    }
                    chunks[c] = events;
                }
            }
            Object[][] data = null;
            long[] times = null;
            if (!chunked) {
                data = new Object[n][];
                times = new long[n];
                for (int i = 0; i < n; i++) {
                    data[i] = rows[i].clone();
                    times[i] = (Long) rows[i][3];
                }
            }
            SiddhiAppRuntime runtime = manager.createSiddhiAppRuntime(app);
            List<Event> kept = new ArrayList<>(timed ? 1 << 20 : 1 << 16);
            runtime.addCallback("Out", new StreamCallback() {
                @Override
                public void receive(Event[] events) {
                    kept.addAll(Arrays.asList(events));
                }
            });
            runtime.start();
            InputHandler handler = runtime.getInputHandler("Trades");
            System.gc();
            double before = 0;
            long cpu0 = 0;
            if (timed) {
                resetPeak();
                before = statusKb("VmRSS") / 1024.0;
                cpu0 = processCpuNanos();
            }
            long start = System.nanoTime();
            if (chunked) {
                for (Event[] events : chunks) {
                    handler.send(events);
                }
            } else {
                for (int i = 0; i < n; i++) {
                    handler.send(times[i], data[i]);
                }
            }
            long seconds = System.nanoTime() - start;
            if (timed) {
                double peak = statusKb("VmHWM") / 1024.0;
                double cpu = (processCpuNanos() - cpu0) / 1e9;
                List<Attribute> types = runtime.getStreamDefinitionMap().get("Out").getAttributeList();
                writeOutputs(outFile, types, kept);
                answers.println("@@BENCH {\"seconds\": " + seconds / 1e9 + ", \"outputs\": " + kept.size()
                        + ", \"rss_before_mb\": " + before + ", \"peak_mb\": " + peak
                        + ", \"cpu_seconds\": " + cpu + ", \"events\": " + n
                        + ", \"warmup_rounds\": " + warmedUp + "}");
            } else {
                warmedUp++;
            }
            runtime.shutdown();
        }
        manager.shutdown();
        System.exit(0);
    }

    private static Object[][] readEvents(String path) throws IOException {
        Map<String, String> symbols = new HashMap<>();  // one string per symbol, as in Python's rows
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(new FileInputStream(path), 1 << 20))) {
            int n = in.readInt();
            Object[][] rows = new Object[n][];
            for (int i = 0; i < n; i++) {
                String symbol = in.readUTF();
                String shared = symbols.putIfAbsent(symbol, symbol);
                rows[i] = new Object[]{shared == null ? symbol : shared, in.readDouble(), in.readLong(), in.readLong()};
            }
            return rows;
        }
    }

    private static void writeOutputs(String path, List<Attribute> types, List<Event> events) throws IOException {
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(path), 1 << 20))) {
            out.writeInt(types.size());
            for (Attribute a : types) {
                out.writeByte(typeLetter(a.getType()));
            }
            out.writeInt(events.size());
            for (Event e : events) {
                out.writeLong(e.getTimestamp());
                Object[] data = e.getData();
                for (int i = 0; i < types.size(); i++) {
                    Object v = data[i];
                    if (v == null) {
                        out.writeByte(0);
                        continue;
                    }
                    out.writeByte(1);
                    switch (typeLetter(types.get(i).getType())) {
                        case 'D': out.writeDouble(((Number) v).doubleValue()); break;
                        case 'F': out.writeDouble(((Number) v).floatValue()); break;
                        case 'L': out.writeLong(((Number) v).longValue()); break;
                        case 'I': out.writeLong(((Number) v).intValue()); break;
                        case 'B': out.writeByte((Boolean) v ? 1 : 0); break;
                        default: out.writeUTF(v.toString());
                    }
                }
            }
        }
    }

    private static char typeLetter(Attribute.Type type) {
        switch (type) {
            case DOUBLE: return 'D';
            case FLOAT: return 'F';
            case LONG: return 'L';
            case INT: return 'I';
            case BOOL: return 'B';
            default: return 'S';
        }
    }

    private static void resetPeak() {
        try (FileWriter w = new FileWriter("/proc/self/clear_refs")) {
            w.write("5");
        } catch (IOException e) {
            // the peak then counts from the process's start
        }
    }

    private static long statusKb(String field) {
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
                if (line.startsWith(field + ":")) {
                    return Long.parseLong(line.substring(field.length() + 1).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException e) {
            // not Linux
        }
        return 0;
    }

    private static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return 0;
    }
}

// Prints java.util.HashSet values as ObjectOutputStream serializes them (base64), the reference
// bytes of java_hashsets.json for test_java_sets.py: java JavaHashSets.java
import java.io.*;
import java.util.*;
public class JavaHashSets {
    static String hex(Object o) throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(b)) { out.writeObject(o); }
        return Base64.getEncoder().encodeToString(b.toByteArray());
    }
    static <T> HashSet<T> s(T... v) { HashSet<T> h = new HashSet<>(); for (T x : v) h.add(x); return h; }
    public static void main(String[] a) throws Exception {
        System.out.println("int " + hex(s(3, -7, 100000)));
        System.out.println("long " + hex(s(1700000000000L, -1L, 5L)));
        System.out.println("float " + hex(s(1.5f, -0.25f)));
        System.out.println("double " + hex(s(2.5, 1e300, -0.0)));
        System.out.println("bool " + hex(s(true, false)));
        System.out.println("string " + hex(s("IBM", "WSO2", "é€😀", "")));
        System.out.println("empty " + hex(new HashSet<String>()));
        HashSet<Integer> big = new HashSet<>(); for (int i = 0; i < 40; i++) big.add(i * 7);
        System.out.println("big " + hex(big));
    }
}

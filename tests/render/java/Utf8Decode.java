// Test helper: decodes byte strings as Kafka's StringDecoder does (new String(bytes, UTF_8),
// which replaces malformed input), printing each result re-encoded as UTF-8.
// Usage: java Utf8Decode.java < lines of hex  ->  one line of hex per input line
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

public class Utf8Decode {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            byte[] b = new byte[line.length() / 2];
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) Integer.parseInt(line.substring(2 * i, 2 * i + 2), 16);
            }
            for (byte x : new String(b, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8)) {
                out.append(String.format("%02x", x & 0xff));
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}

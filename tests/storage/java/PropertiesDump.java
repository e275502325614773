// What java.util.Properties.load(InputStream) reads from each file named on the command
// line, for tests/storage/test_storage_config.py: per file a line "FILE <path>", then one
// line per entry "<key> <value>" with every UTF-16 code unit as 4 hex digits (so any
// character survives), or "ERROR <message>" when load throws.
import java.io.FileInputStream;
import java.io.InputStream;
import java.util.Map;
import java.util.Properties;

public class PropertiesDump {
    static String hex(String s) {
        StringBuilder b = new StringBuilder("x");
        for (int i = 0; i < s.length(); i++) {
            b.append(String.format("%04x", (int) s.charAt(i)));
        }
        return b.toString();
    }

    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder();
        for (String f : args) {
            out.append("FILE ").append(f).append('\n');
            Properties p = new Properties();
            try (InputStream in = new FileInputStream(f)) {
                p.load(in);
                for (Map.Entry<Object, Object> e : p.entrySet()) {
                    out.append(hex((String) e.getKey())).append(' ')
                       .append(hex((String) e.getValue())).append('\n');
                }
            } catch (IllegalArgumentException e) {
                out.append("ERROR ").append(e.getMessage()).append('\n');
            }
        }
        System.out.print(out);
    }
}

// Test helper: compresses files the way Kafka's GzipCompression.wrapForOutput does
// (a BufferedOutputStream of 16 KiB over java.util.zip.GZIPOutputStream with an 8 KiB
// buffer and the level set on its Deflater), fed in 100-byte writes as a record builder
// would. Usage: java KafkaGzip.java LEVEL IN OUT [IN OUT ...]
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

public class KafkaGzip {
    static final class LevelGzip extends GZIPOutputStream {
        LevelGzip(OutputStream out, int size, int level) throws IOException {
            super(out, size);
            def.setLevel(level);
        }
    }

    public static void main(String[] args) throws IOException {
        int level = Integer.parseInt(args[0]);
        for (int i = 1; i + 1 < args.length; i += 2) {
            byte[] in = Files.readAllBytes(Path.of(args[i]));
            ByteArrayOutputStream buffer = new ByteArrayOutputStream();
            try (OutputStream out = new BufferedOutputStream(
                    new LevelGzip(buffer, 8 * 1024, level), 16 * 1024)) {
                for (int pos = 0; pos < in.length; pos += 100) {
                    out.write(in, pos, Math.min(100, in.length - pos));
                }
            }
            Files.write(Path.of(args[i + 1]), buffer.toByteArray());
        }
    }
}

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.utils.internals.Exit;

/**
 * Runs many invocations of Kafka's command-line tool classes in one JVM, so that a test
 * comparing hundreds of files with DumpLogSegments pays one JVM start, not hundreds.
 *
 * <pre>
 * java ToolBatch IN.json OUT.jsonl
 *   IN.json   => [ {"main": "org.apache.kafka.tools.DumpLogSegments", "args": ["--files", "..."]}, ... ]
 *   OUT.jsonl => one line per invocation, in order:
 *                {"exit": INT, "stdout": STRING, "stderr": STRING, "exception": STRING|null}
 * </pre>
 *
 * A tool's {@code Exit.exit(status)} (Kafka's tools exit through
 * {@code org.apache.kafka.common.utils.internals.Exit}) ends that invocation with the status;
 * returning from {@code main} is status 0; an exception escaping {@code main} is status 1,
 * its stack trace appended to stderr as the JVM would print it. System.out and System.err
 * are captured per invocation as UTF-8.
 */
public final class ToolBatch {

    /** Thrown by the exit procedure to unwind a tool's main. */
    static final class ExitCalled extends RuntimeException {
        final int status;

        ExitCalled(int status) {
            super(null, null, false, false);
            this.status = status;
        }
    }

    public static void main(String[] argv) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        JsonNode calls = mapper.readTree(Files.readAllBytes(Path.of(argv[0])));
        Exit.setExitProcedure((status, message) -> {
            throw new ExitCalled(status);
        });
        Exit.setHaltProcedure((status, message) -> {
            throw new ExitCalled(status);
        });
        PrintStream realOut = System.out;
        PrintStream realErr = System.err;
        List<String> lines = new ArrayList<>();
        for (JsonNode call : calls) {
            String[] args = new String[call.get("args").size()];
            for (int i = 0; i < args.length; i++) {
                args[i] = call.get("args").get(i).asText();
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            PrintStream outStream = new PrintStream(out, true, StandardCharsets.UTF_8);
            PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
            System.setOut(outStream);
            System.setErr(errStream);
            int status = 0;
            String exception = null;
            try {
                Method main = Class.forName(call.get("main").asText()).getMethod("main", String[].class);
                main.invoke(null, (Object) args);
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof ExitCalled) {
                    status = ((ExitCalled) cause).status;
                } else {
                    status = 1;
                    exception = cause.toString();
                    errStream.print("Exception in thread \"main\" ");
                    cause.printStackTrace(errStream);
                }
            } finally {
                outStream.flush();
                errStream.flush();
                System.setOut(realOut);
                System.setErr(realErr);
            }
            ObjectNode result = mapper.createObjectNode();
            result.put("exit", status);
            result.put("stdout", out.toString(StandardCharsets.UTF_8));
            result.put("stderr", err.toString(StandardCharsets.UTF_8));
            result.put("exception", exception);
            lines.add(mapper.writeValueAsString(result));
        }
        Files.write(Path.of(argv[1]), lines, StandardCharsets.UTF_8);
    }
}

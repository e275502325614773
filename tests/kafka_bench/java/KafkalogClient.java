import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Kafka's Java client driven by a JSON spec, for the tests: the same program writes to the
 * bench broker and to {@code kafkalog serve}, and reads either back as JSON Lines.
 *
 * <pre>
 * java KafkalogClient produce BOOTSTRAP SPEC.json     (acks to stdout, JSON Lines)
 *   SPEC => {"producer": {CONFIG: STRING, ...},        (any ProducerConfig; serializers fixed)
 *            "steps": [STEP, ...]}
 *   STEP => {"op": "send", "topic": T, "partition": P|null, "timestamp": MS|null,
 *            "key": UTF8|null, "value": UTF8|null,    (or "keyBase64"/"valueBase64")
 *            "headers": [[KEY, UTF8|null], ...]}      (or [KEY, {"base64": B64}])
 *         | {"op": "flush"}                             (closes the batches being built:
 *                                                       a batch boundary when linger.ms is large)
 *         | {"op": "begin"} | {"op": "commit"} | {"op": "abort"}
 *         | {"op": "sendOffsets", "group": G, "offsets": [{"topic", "partition", "offset"}]}
 *   stdout => {"topic", "partition", "offset", "timestamp"} per send, in order, once acked,
 *             or {"error": EXCEPTION_CLASS, "message"} for a send that failed (a batch not
 *             flushed before "abort" is never written: TransactionAbortedException)
 *
 * java KafkalogClient consume BOOTSTRAP TOPIC ISOLATION [TIMEOUT_MS] [CONFIG=VALUE ...]
 *   every partition of TOPIC from its beginning to its end offset (the LSO for
 *   read_committed, once it reaches the log end offset or after kafkalog.stable.wait.ms,
 *   default 10000, a pseudo-config taken out of the others) as JSON Lines, per partition
 *   in offset order:
 *   {"topic", "partition", "offset", "timestamp", "timestampType", "leaderEpoch"|null,
 *    "key": B64|null, "value": B64|null, "headers": [[KEY, B64|null], ...]}
 * </pre>
 *
 * initTransactions() is called first when the producer has a transactional.id. Exit status
 * 1 with the exception on stderr when anything fails.
 */
public final class KafkalogClient {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        if (args.length >= 3 && args[0].equals("produce")) {
            produce(args[1], MAPPER.readTree(Files.readAllBytes(Path.of(args[2]))));
        } else if (args.length >= 4 && args[0].equals("consume")) {
            long timeoutMs = args.length > 4 ? Long.parseLong(args[4]) : 30_000L;
            Map<String, String> extra = new HashMap<>();
            for (int i = 5; i < args.length; i++) {
                int eq = args[i].indexOf('=');
                extra.put(args[i].substring(0, eq), args[i].substring(eq + 1));
            }
            consume(args[1], args[2], args[3], timeoutMs, extra);
        } else {
            System.err.println("usage: KafkalogClient produce BOOTSTRAP SPEC.json | "
                    + "consume BOOTSTRAP TOPIC ISOLATION [TIMEOUT_MS] [CONFIG=VALUE ...]");
            System.exit(2);
        }
        System.out.flush();
    }

    private static byte[] bytes(JsonNode step, String field) {
        if (step.hasNonNull(field + "Base64")) {
            return Base64.getDecoder().decode(step.get(field + "Base64").asText());
        }
        JsonNode node = step.get(field);
        return node == null || node.isNull() ? null : node.asText().getBytes(StandardCharsets.UTF_8);
    }

    private static void produce(String bootstrap, JsonNode spec) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        JsonNode configs = spec.path("producer");
        for (Iterator<Map.Entry<String, JsonNode>> it = configs.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            props.put(e.getKey(), e.getValue().asText());
        }
        List<Future<RecordMetadata>> pending = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            if (props.containsKey(ProducerConfig.TRANSACTIONAL_ID_CONFIG)) {
                producer.initTransactions();
            }
            for (JsonNode step : spec.path("steps")) {
                String op = step.get("op").asText();
                switch (op) {
                    case "send":
                        pending.add(producer.send(record(step)));
                        break;
                    case "flush":
                        producer.flush();
                        break;
                    case "begin":
                        producer.beginTransaction();
                        break;
                    case "commit":
                        producer.commitTransaction();
                        break;
                    case "abort":
                        producer.abortTransaction();
                        break;
                    case "sendOffsets":
                        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                        for (JsonNode o : step.get("offsets")) {
                            offsets.put(new TopicPartition(o.get("topic").asText(), o.get("partition").asInt()),
                                    new OffsetAndMetadata(o.get("offset").asLong()));
                        }
                        producer.sendOffsetsToTransaction(offsets,
                                new ConsumerGroupMetadata(step.get("group").asText()));
                        break;
                    default:
                        throw new IllegalArgumentException("unknown op " + op);
                }
            }
            producer.flush();
            for (Future<RecordMetadata> f : pending) {
                ObjectNode ack = MAPPER.createObjectNode();
                try {
                    RecordMetadata m = f.get();
                    ack.put("topic", m.topic());
                    ack.put("partition", m.partition());
                    ack.put("offset", m.offset());
                    ack.put("timestamp", m.timestamp());
                } catch (ExecutionException e) {
                    // a send that failed (e.g. not flushed before abortTransaction)
                    ack.put("error", e.getCause().getClass().getSimpleName());
                    ack.put("message", e.getCause().getMessage());
                }
                System.out.println(MAPPER.writeValueAsString(ack));
            }
        }
    }

    private static ProducerRecord<byte[], byte[]> record(JsonNode step) {
        RecordHeaders headers = new RecordHeaders();
        for (JsonNode h : step.path("headers")) {
            JsonNode v = h.get(1);
            byte[] value = v == null || v.isNull() ? null
                    : v.isObject() ? Base64.getDecoder().decode(v.get("base64").asText())
                    : v.asText().getBytes(StandardCharsets.UTF_8);
            headers.add(h.get(0).asText(), value);
        }
        Integer partition = step.hasNonNull("partition") ? step.get("partition").asInt() : null;
        Long timestamp = step.hasNonNull("timestamp") ? step.get("timestamp").asLong() : null;
        return new ProducerRecord<>(step.get("topic").asText(), partition, timestamp,
                bytes(step, "key"), bytes(step, "value"), headers);
    }

    private static String b64(byte[] b) {
        return b == null ? null : Base64.getEncoder().encodeToString(b);
    }

    /**
     * The end offsets to read to. Under read_committed they are the LSOs; EndTxn returns
     * before the coordinator has written the markers, so this waits (up to stableWaitMs)
     * until each LSO equals the log end offset (no transaction open), then takes what it has.
     */
    private static Map<TopicPartition, Long> endOffsets(String bootstrap,
            KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> partitions,
            String isolation, long stableWaitMs) throws Exception {
        Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
        if (!isolation.equals("read_committed")) {
            return end;
        }
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        long deadline = System.currentTimeMillis() + stableWaitMs;
        try (KafkaConsumer<byte[], byte[]> uncommitted = new KafkaConsumer<>(props)) {
            while (true) {
                Map<TopicPartition, Long> leo = uncommitted.endOffsets(partitions, Duration.ofSeconds(30));
                if (leo.equals(end) || System.currentTimeMillis() > deadline) {
                    return end;
                }
                Thread.sleep(50);
                end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            }
        }
    }

    private static void consume(String bootstrap, String topic, String isolation, long timeoutMs,
                                Map<String, String> extra) throws Exception {
        String wait = extra.remove("kafkalog.stable.wait.ms");
        long stableWaitMs = wait == null ? 10_000L : Long.parseLong(wait);
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.putAll(extra);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo p : consumer.partitionsFor(topic, Duration.ofMillis(timeoutMs))) {
                partitions.add(new TopicPartition(topic, p.partition()));
            }
            partitions.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = endOffsets(bootstrap, consumer, partitions, isolation, stableWaitMs);
            System.err.println("KafkalogClient: " + topic + " " + isolation + ": partitions "
                    + partitions + ", end offsets " + end);
            Map<TopicPartition, List<String>> lines = new HashMap<>();
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (!done(consumer, partitions, end)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("timed out before the end offsets " + end);
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    ObjectNode line = MAPPER.createObjectNode();
                    line.put("topic", r.topic());
                    line.put("partition", r.partition());
                    line.put("offset", r.offset());
                    line.put("timestamp", r.timestamp());
                    line.put("timestampType", r.timestampType().name);
                    if (r.leaderEpoch().isPresent()) {
                        line.put("leaderEpoch", r.leaderEpoch().get());
                    } else {
                        line.putNull("leaderEpoch");
                    }
                    line.put("key", b64(r.key()));
                    line.put("value", b64(r.value()));
                    ArrayNode hs = line.putArray("headers");
                    for (Header h : r.headers()) {
                        hs.addArray().add(h.key()).add(b64(h.value()));
                    }
                    lines.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new ArrayList<>())
                            .add(MAPPER.writeValueAsString(line));
                }
            }
            for (TopicPartition tp : partitions) {
                for (String line : lines.getOrDefault(tp, List.of())) {
                    System.out.println(line);
                }
            }
        }
    }

    private static boolean done(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> partitions,
                                Map<TopicPartition, Long> end) {
        for (TopicPartition tp : partitions) {
            if (consumer.position(tp) < end.get(tp)) {
                return false;
            }
        }
        return true;
    }
}

import java.lang.reflect.Field;
import java.util.Map;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.protocol.types.ArrayOf;
import org.apache.kafka.common.protocol.types.BoundField;
import org.apache.kafka.common.protocol.types.CompactArrayOf;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.TaggedFields;
import org.apache.kafka.common.protocol.types.Type;

/**
 * The layouts of Kafka's generated messages, from the classes themselves: for the tests
 * that hold kafkalog's declarations (kafkalog_cli/decoders/*_messages.py) against the
 * pinned Kafka's.
 *
 * <pre>
 * java MessageSchemas CLASS...        (fully qualified names of generated messages)
 *   stdout => {SIMPLE_NAME: {"lowest", "highest", "versions": {V: [FIELD, ...]}}
 *              | {"missing": true}, ...}     (no such class in this Kafka)
 *   FIELD  => {"name": snake_case, "type": TYPE}
 *           | {"name": "_tagged_fields", "tagged": {TAG: {"name", "type": TYPE}}}
 *   TYPE   => {"kind": "plain", "name": Type.toString(), "nullable"}
 *           | {"kind": "array", "name": "ARRAY"|"COMPACT_ARRAY"|..., "nullable", "element": TYPE}
 *           | {"kind": "struct", "fields": [FIELD, ...]}
 * java MessageSchemas --record-types ENUM...   (CoordinatorRecordType / MetadataRecordType)
 *   stdout => {ENUM: {ID: [KEY_OR_RECORD_CLASS, VALUE_CLASS|null]}}
 * </pre>
 */
public final class MessageSchemas {

    static final ObjectMapper M = new ObjectMapper();

    static ObjectNode type(Type t) throws Exception {
        ObjectNode n = M.createObjectNode();
        if (t instanceof Schema s) {
            n.put("kind", "struct");
            n.set("fields", fields(s));
        } else if (t.arrayElementType().isPresent()) {
            n.put("kind", "array");
            n.put("name", t.toString().replaceAll("\\(.*", ""));
            n.put("nullable", t.isNullable());
            n.set("element", type(t.arrayElementType().get()));
        } else {
            n.put("kind", "plain");
            n.put("name", t.toString());
            n.put("nullable", t.isNullable());
        }
        return n;
    }

    @SuppressWarnings("unchecked")
    static ArrayNode fields(Schema s) throws Exception {
        ArrayNode out = M.createArrayNode();
        for (BoundField bf : s.fields()) {
            ObjectNode f = M.createObjectNode();
            f.put("name", bf.def.name);
            if (bf.def.type instanceof TaggedFields tf) {
                Field m = TaggedFields.class.getDeclaredField("fields");
                m.setAccessible(true);
                ObjectNode tags = M.createObjectNode();
                for (Map.Entry<Integer, org.apache.kafka.common.protocol.types.Field> e :
                        ((Map<Integer, org.apache.kafka.common.protocol.types.Field>) m.get(tf)).entrySet()) {
                    ObjectNode tfn = M.createObjectNode();
                    tfn.put("name", e.getValue().name);
                    tfn.set("type", type(e.getValue().type));
                    tags.set(String.valueOf(e.getKey()), tfn);
                }
                f.set("tagged", tags);
            } else {
                f.set("type", type(bf.def.type));
            }
            out.add(f);
        }
        return out;
    }

    static ObjectNode recordTypes(String enumName) throws Exception {
        ObjectNode out = M.createObjectNode();
        Class<?> e = Class.forName(enumName);
        for (Object constant : e.getEnumConstants()) {
            ArrayNode pair = M.createArrayNode();
            Object id = e.getMethod("id").invoke(constant);
            try {
                pair.add(e.getMethod("newRecordKey").invoke(constant).getClass().getName());
                pair.add(e.getMethod("newRecordValue").invoke(constant).getClass().getName());
            } catch (NoSuchMethodException noCoordinator) {
                pair.add(e.getMethod("newMetadataRecord").invoke(constant).getClass().getName());
                pair.addNull();
            }
            out.set(String.valueOf(id), pair);
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        ObjectNode all = M.createObjectNode();
        if (args.length > 0 && args[0].equals("--record-types")) {
            for (int i = 1; i < args.length; i++) {
                all.set(args[i], recordTypes(args[i]));
            }
            System.out.println(M.writeValueAsString(all));
            return;
        }
        for (String name : args) {
            Class<?> c;
            try {
                c = Class.forName(name);
            } catch (ClassNotFoundException e) {
                all.set(name.substring(name.lastIndexOf('.') + 1), M.createObjectNode().put("missing", true));
                continue;
            }
            Schema[] schemas = (Schema[]) c.getField("SCHEMAS").get(null);
            ObjectNode msg = M.createObjectNode();
            msg.put("lowest", (short) c.getField("LOWEST_SUPPORTED_VERSION").get(null));
            msg.put("highest", (short) c.getField("HIGHEST_SUPPORTED_VERSION").get(null));
            ObjectNode vs = M.createObjectNode();
            for (int v = 0; v < schemas.length; v++) {
                if (schemas[v] != null) vs.set(String.valueOf(v), fields(schemas[v]));
            }
            msg.set("versions", vs);
            all.set(c.getSimpleName(), msg);
        }
        System.out.println(M.writeValueAsString(all));
    }
}

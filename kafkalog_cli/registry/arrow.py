"""Typed columns of decoded keys and values, for ``export`` and the Spark source
(``--value-decoder`` / ``.option("valueDecoder", ...)``): Arrow types derived from the
subject's newest schema, every record read as that schema.

* **Avro**: every record is read through Avro schema resolution with the subject's
  newest schema as the reader's (fastavro: ``schemaless_reader(writer, reader)``), so
  all versions land in one type. Types: a record is a struct, an array a list, a map a
  map<string, ...>, an enum a string, fixed a fixed-size binary, ``["null", T]`` a
  nullable T, any other union a struct of ``member0``, ``member1``, ... (Spark's
  ``from_avro``); logical types as Arrow's: ``date`` date32, ``time-millis`` time32[ms],
  ``time-micros`` time64[us], ``timestamp-millis``/``-micros`` timestamp[ms/us, UTC],
  ``local-timestamp-*`` timestamp without zone, ``decimal`` decimal128 (decimal256
  beyond 38 digits), ``uuid`` a string.
* **Protobuf**: the payload parsed as the newest schema's message (Protobuf reads older
  writers' bytes by field number): a message is a struct, ``repeated`` a list, a map a
  map, an enum its name, 64-bit integers int64/uint64.
* **JSON Schema**, a subject without a schema, or a recursive type: the JSON text, a
  string column.

A record that does not decode or resolve (not framed, an unknown id, a writer schema the
reader cannot resolve) has a null typed value; its bytes go to the ``...Raw`` column and
it is counted.
"""

from __future__ import annotations

from decimal import Decimal

from ..errors import SchemaDecodeError
from .avro import _type_of
from .records import AVRO, PROTOBUF
from .wire import read_message_indexes, split_frame

# -- Avro ---------------------------------------------------------------------------------

class _AvroArrow:
    """The Arrow type of a fastavro parsed schema (logical types kept) and a converter of
    raw decoded values (logical types set aside, unions as fastavro's return_named_type
    gives them) to values pyarrow builds that type from."""

    def __init__(self, named: dict):
        self.named = named
        self.stack: list = []

    def of(self, s):  # -> (arrow type, converter or None)
        import pyarrow as pa

        t = _type_of(s)
        logical = s.get("logicalType") if isinstance(s, dict) else None
        if logical is not None:
            lt = self._logical(s, t, logical)
            if lt is not None:
                return lt
        simple = {"null": pa.null(), "boolean": pa.bool_(), "int": pa.int32(),
                  "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
                  "bytes": pa.binary(), "string": pa.string()}
        if t in simple:
            return simple[t], None
        if t == "enum":
            return pa.string(), _untuple
        if t == "fixed":
            return pa.binary(s["size"]), _untuple
        if t == "array":
            it, c = self.of(s["items"])
            return pa.list_(it), None if c is None else (lambda v: [c(x) for x in v])
        if t == "map":
            vt, c = self.of(s["values"])
            return pa.map_(pa.string(), vt), (
                (lambda v: list(v.items())) if c is None else
                (lambda v: [(k, c(x)) for k, x in v.items()]))
        if t == "union":
            return self._union(s)
        if t in ("record", "error"):
            return self._record(s)
        target = self.named.get(t)
        if target is None:
            raise SchemaDecodeError(f"unknown Avro type {t}")
        return self.of(target)

    def _logical(self, s, t, logical):
        import pyarrow as pa

        if logical == "date" and t == "int":
            return pa.date32(), None
        if logical == "time-millis" and t == "int":
            return pa.time32("ms"), None
        if logical == "time-micros" and t == "long":
            return pa.time64("us"), None
        if logical in ("timestamp-millis", "timestamp-micros") and t == "long":
            return pa.timestamp("ms" if logical.endswith("millis") else "us", tz="UTC"), None
        if logical in ("local-timestamp-millis", "local-timestamp-micros") and t == "long":
            return pa.timestamp("ms" if logical.endswith("millis") else "us"), None
        if logical == "decimal" and t in ("bytes", "fixed"):
            p, scale = int(s.get("precision", 0)), int(s.get("scale", 0))
            if not 0 < p <= 76 or not 0 <= scale <= p:
                return None
            typ = pa.decimal128(p, scale) if p <= 38 else pa.decimal256(p, scale)

            def conv(v, scale=scale):
                if type(v) is tuple:
                    v = v[1]
                return Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-scale)
            return typ, conv
        if logical == "uuid" and t == "string":
            return pa.string(), None
        return None

    def _record(self, s):
        import pyarrow as pa

        name = s["name"]
        if name in self.stack:
            raise SchemaDecodeError(f"the recursive type {name} has no Arrow type")
        self.stack.append(name)
        try:
            fields, convs = [], []
            for f in s["fields"]:
                ft, c = self.of(f["type"])
                fields.append(pa.field(f["name"], ft))
                if c is not None:
                    convs.append((f["name"], c))
        finally:
            self.stack.pop()
        if not convs:
            return pa.struct(fields), _untuple

        def conv(d):
            if type(d) is tuple:
                d = d[1]
            for n, c in convs:
                v = d[n]
                if v is not None:
                    d[n] = c(v)
            return d
        return pa.struct(fields), conv

    def _union(self, branches):
        import pyarrow as pa

        others = [b for b in branches if _type_of(b) != "null"]
        if len(others) == 1:
            return self.of(others[0])
        members = [self.of(b) for b in others]
        typ = pa.struct([pa.field(f"member{i}", t) for i, (t, _) in enumerate(members)])
        keys = []
        for b in others:
            t = _type_of(b)
            if isinstance(b, dict) and "name" in b:
                keys.append(("named", b["name"]))
            elif t in self.named:
                keys.append(("named", t))
            else:
                keys.append(("python", {"boolean": bool, "int": int, "long": int,
                                        "float": float, "double": float, "bytes": bytes,
                                        "string": str, "array": list, "map": dict}.get(t)))

        def conv(v):
            i = None
            if type(v) is tuple:
                i = next((j for j, (k, n) in enumerate(keys)
                          if k == "named" and n == v[0]), None)
            else:
                i = next((j for j, (k, p) in enumerate(keys)
                          if k == "python" and p is type(v)), None)
                if i is None and type(v) is int:
                    i = next((j for j, (k, p) in enumerate(keys)
                              if k == "python" and p is float), None)
            if i is None:
                return None
            c = members[i][1]
            return {f"member{i}": v if c is None else c(v)}
        return typ, conv


def _untuple(v):
    return v[1] if type(v) is tuple else v


# -- Protobuf -----------------------------------------------------------------------------

def _protobuf_arrow(desc, stack=()):
    """(arrow type, converter of a message to a dict) of a message descriptor."""
    import pyarrow as pa
    from google.protobuf.descriptor import FieldDescriptor as F

    if desc.full_name in stack:
        raise SchemaDecodeError(f"the recursive type {desc.full_name} has no Arrow type")
    stack = (*stack, desc.full_name)
    scalar = {F.TYPE_DOUBLE: pa.float64(), F.TYPE_FLOAT: pa.float32(),
              F.TYPE_INT64: pa.int64(), F.TYPE_SINT64: pa.int64(),
              F.TYPE_SFIXED64: pa.int64(), F.TYPE_UINT64: pa.uint64(),
              F.TYPE_FIXED64: pa.uint64(), F.TYPE_INT32: pa.int32(),
              F.TYPE_SINT32: pa.int32(), F.TYPE_SFIXED32: pa.int32(),
              F.TYPE_UINT32: pa.uint32(), F.TYPE_FIXED32: pa.uint32(),
              F.TYPE_BOOL: pa.bool_(), F.TYPE_STRING: pa.string(),
              F.TYPE_BYTES: pa.binary()}
    fields, convs = [], []
    for f in desc.fields:
        if f.type == F.TYPE_MESSAGE:
            if f.message_type.GetOptions().map_entry:
                kt, kc = _field_arrow(f.message_type.fields_by_name["key"], scalar, stack)
                vt, vc = _field_arrow(f.message_type.fields_by_name["value"], scalar, stack)
                typ = pa.map_(kt, vt)

                def conv(v, vc=vc):
                    return [(k, x if vc is None else vc(x)) for k, x in v.items()]
                fields.append(pa.field(f.name, typ))
                convs.append((f.name, conv, False, False))
                continue
        t, c = _field_arrow(f, scalar, stack)
        repeated = (f.is_repeated if hasattr(f, "is_repeated")  # protobuf >= 6
                    else f.label == F.LABEL_REPEATED)
        if repeated:
            t = pa.list_(t)
        fields.append(pa.field(f.name, t))
        presence = (not repeated and f.type == F.TYPE_MESSAGE)
        convs.append((f.name, c, repeated, presence))

    def conv_msg(m):
        out = {}
        for name, c, repeated, presence in convs:
            if presence and not m.HasField(name):
                out[name] = None
                continue
            v = getattr(m, name)
            if repeated:
                out[name] = [x if c is None else c(x) for x in v]
            elif c is None:
                out[name] = v
            else:
                out[name] = c(v)
        return out
    return pa.struct(fields), conv_msg


def _field_arrow(f, scalar, stack):
    import pyarrow as pa
    from google.protobuf.descriptor import FieldDescriptor as F

    if f.type == F.TYPE_MESSAGE:
        return _protobuf_arrow(f.message_type, stack)
    if f.type == F.TYPE_ENUM:
        by_number = {v.number: v.name for v in f.enum_type.values}
        return pa.string(), lambda v: by_number.get(v, str(v))
    return scalar[f.type], None


# -- one side's typed column ---------------------------------------------------------------

class TypedColumn:
    """The typed column of one side (``key``/``value``) of one topic's records.

    Args:
        source: the schema source (store, REST, chained).
        topic / side: the subject is ``<topic>-<side>`` (TopicNameStrategy).
        mode: a decoder mode (``schema-registry``, ``avro``, ``protobuf``, ``json-schema``).
    """

    def __init__(self, source, topic: str, side: str, mode: str):
        import pyarrow as pa

        from .decoder import ENCODING_OF_TYPE, RecordDecoder, codec_for

        self.source, self.mode = source, mode
        self.subject = f"{topic}-{side}"
        self._dec = RecordDecoder(source, topic, **{f"{side}_decoder": mode})
        self.kind = "json"
        self.arrow_type = self.build_type = pa.string()
        self.reader = None
        self._readers: dict = {}
        self.problems: list[str] = []
        reader = source.latest(self.subject)
        if reader is None or (mode != "schema-registry"
                              and ENCODING_OF_TYPE.get(reader.schema_type) != mode):
            return
        try:
            self.reader = codec_for(source, reader, reader.id)
            if reader.schema_type == AVRO:
                self.arrow_type, self._conv = _AvroArrow(
                    self.reader.logical_named).of(self.reader.logical_schema)
                self.kind = "avro"
            elif reader.schema_type == PROTOBUF:
                self.arrow_type, self._conv = _protobuf_arrow(
                    self.reader.message_descriptor([0]))
                self.kind = "protobuf"
        except SchemaDecodeError as e:
            self.problems.append(f"{self.subject}: {e.message}: written as JSON text")
        if self.kind == "json":
            self.arrow_type = pa.string()
        #: the type the values are built as; :attr:`arrow_type` (which a caller may set
        #: to another, such as the one Spark reads back) is what they are cast to
        self.build_type = self.arrow_type

    def _one(self, data: bytes):
        sid, pos = split_frame(data)
        if self.kind == "avro":
            writer = self._dec.codec(sid)
            if writer.kind != "avro":
                raise SchemaDecodeError(f"schema id {sid} is a {writer.kind} schema")
            reader = self._readers.get(sid)
            if reader is None:
                # the reader's own schema (or an equal one) reads without resolution,
                # which fastavro does ~3x slower even between equal schemas
                reader = self._readers[sid] = (
                    False if writer.schema == self.reader.schema else self.reader)
            datum = writer.decode(data[pos:], reader or None)
            return sid, datum if self._conv is None else self._conv(datum)
        if self.kind == "protobuf":
            writer = self._dec.codec(sid)
            if writer.kind != "protobuf":
                raise SchemaDecodeError(f"schema id {sid} is a {writer.kind} schema")
            indexes, pos = read_message_indexes(data, pos)
            if indexes != [0]:
                raise SchemaDecodeError(f"message index {indexes} is not the subject's "
                                        "first message")
            return sid, self._conv(self.reader.decode(data[pos:], [0]))
        f = self._dec.decode_field(data, self.mode, self.subject.endswith("-key"))
        return sid, f.json

    def column(self, values: list) -> tuple:
        """``(typed array, schema ids (int32), raw bytes of the records that did not
        decode (binary), count of those)`` for ``values`` (bytes or None)."""
        import gc

        import pyarrow as pa

        out, ids, raw = [], [], []
        one = self._one
        # the decoded values hold no cycle: a collection per 700 of them would walk all
        # those kept so far (measured: 2x the decode's CPU over a 64k-row batch)
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._decode_all(values, one, out, ids, raw)
        finally:
            if was_enabled:
                gc.enable()
        bad = len(raw) - raw.count(None)
        try:
            arr = pa.array(out, type=self.build_type)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            arr, ids, raw, bad = self._one_by_one(out, ids, raw, values, bad)
        if arr.type != self.arrow_type:
            arr = arr.cast(self.arrow_type)
        return arr, pa.array(ids, type=pa.int32()), pa.array(raw, type=pa.binary()), bad

    @staticmethod
    def _decode_all(values, one, out, ids, raw) -> None:
        for v in values:
            if v is None:
                out.append(None)
                ids.append(None)
                raw.append(None)
                continue
            try:
                sid, x = one(v)
            except Exception:  # noqa: BLE001 - kept as bytes, counted
                out.append(None)
                ids.append(None)
                raw.append(v)
                continue
            out.append(x)
            ids.append(sid)
            raw.append(None)

    def _one_by_one(self, out, ids, raw, values, bad):
        """A value pyarrow refuses for the type (a number out of range, ...): that row
        kept as bytes, the others typed."""
        import pyarrow as pa

        for i, x in enumerate(out):
            if x is None:
                continue
            try:
                pa.array([x], type=self.build_type)
            except (pa.ArrowException, TypeError, ValueError, OverflowError):
                out[i], ids[i], raw[i] = None, None, values[i]
                bad += 1
        return pa.array(out, type=self.build_type), ids, raw, bad

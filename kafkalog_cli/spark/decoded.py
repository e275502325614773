"""Keys and values decoded through Schema Registry in the rows of ``export`` and the
Spark source (options ``keyDecoder`` / ``valueDecoder``: ``schema-registry``, ``avro``,
``protobuf``, ``json-schema``; ``schemas``: the ``_schemas`` partition, default the one
in each partition's log directory; ``schemaRegistry``: a live registry's URL,
``schemaRegistryUserInfo``: its ``user:password``).

A decoded side's binary column is replaced by the typed column of
:class:`~kafkalog_cli.registry.arrow.TypedColumn` (the subject's newest schema as every
record's reader), and two columns follow it: ``<side>SchemaId`` (int32, the writer's
id) and ``<side>Raw`` (binary: the bytes of a record that did not decode, which is
counted in ``undecodedRecords``; null otherwise). The records of Kafka's internal topics
(``__consumer_offsets``, ...) and of Schema Registry's own ``_schemas`` are not decoded
(:func:`decodes`): an export of a whole log directory leaves them as they are."""

from __future__ import annotations

from ..errors import InvalidArgumentError

SIDES = ("key", "value")


def decodes(topic: str) -> bool:
    """Whether ``topic``'s records are decoded: not Kafka's internal topics (``__*``), not
    the registry's ``_schemas``."""
    return not topic.startswith("__") and topic != "_schemas"


def registry_options(options: dict):
    """The :class:`~kafkalog_cli.registry.decoder.SchemaRegistryOptions` of a read's
    options, or None when nothing is to be decoded.

    Raises:
        InvalidArgumentError: an unknown decoder.
    """
    o = {str(k).lower(): v for k, v in dict(options).items()}
    key, value = o.get("keydecoder") or None, o.get("valuedecoder") or None
    if not key and not value:
        return None
    from ..registry.decoder import SchemaRegistryOptions

    props = {}
    if o.get("schemaregistryuserinfo"):
        props["basic.auth.user.info"] = str(o["schemaregistryuserinfo"])
    r = SchemaRegistryOptions(key_decoder=key, value_decoder=value,
                              schemas=o.get("schemas") or None,
                              url=o.get("schemaregistry") or None, properties=props)
    r.check()
    return r


class BatchDecoder:
    """Turns record batches of the Kafka-source columns into decoded ones (see the module
    docstring). ``dirs`` maps each topic to one of its partition directories (where its
    ``_schemas`` is found); ``spark``: types as Spark takes them (a type Spark has not,
    such as time or unsigned integers, makes that side JSON text)."""

    def __init__(self, registry, dirs: dict, *, spark: bool = False):
        self.registry = registry
        self.dirs = dirs
        self.spark = spark
        self._columns: dict = {}
        self.undecoded = 0
        self.problems: list[str] = []

    def column(self, topic: str, side: str):
        key = (topic, side)
        c = self._columns.get(key)
        if c is None:
            from ..registry.arrow import TypedColumn

            mode = getattr(self.registry, f"{side}_decoder")
            near = self.dirs.get(topic)
            if near is None:
                raise InvalidArgumentError(f"no partition directory of {topic} to find its "
                                           "_schemas from")
            c = TypedColumn(self.registry.source(near), topic, side, mode)
            if self.spark:
                _spark_types(c)
            self.problems.extend(c.problems)
            self._columns[key] = c
        return c

    def fields(self, topic: str) -> list:
        """``[(side, arrow type)]`` of the decoded sides of ``topic``."""
        return [(side, self.column(topic, side).arrow_type) for side in SIDES
                if getattr(self.registry, f"{side}_decoder")]

    def apply(self, rb):
        """``rb`` with its decoded sides (see the module docstring)."""
        import pyarrow as pa

        topics = rb.column("topic").to_pylist()
        if not any(map(decodes, dict.fromkeys(topics))):
            return rb
        names = list(rb.schema.names)
        arrays = [rb.column(n) for n in names]
        fields = list(rb.schema)
        for side in SIDES:
            if not getattr(self.registry, f"{side}_decoder"):
                continue
            values = rb.column(side).to_pylist()
            typed, ids, raw = self._side(topics, side, values)
            i = names.index(side)
            arrays[i] = typed
            fields[i] = pa.field(side, typed.type)
            arrays[i + 1:i + 1] = [ids, raw]
            fields[i + 1:i + 1] = [pa.field(side + "SchemaId", pa.int32()),
                                   pa.field(side + "Raw", pa.binary())]
            names[i + 1:i + 1] = [side + "SchemaId", side + "Raw"]
        return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))

    def _side(self, topics: list, side: str, values: list):
        import pyarrow as pa

        distinct = list(dict.fromkeys(topics))
        if len(distinct) == 1:
            typed, ids, raw, bad = self.column(distinct[0], side).column(values)
            self.undecoded += bad
            return typed, ids, raw
        # rows of several topics (a Spark split): each topic's rows through its column,
        # then back in row order
        order, parts = [], []
        for t in distinct:
            idx = [i for i, x in enumerate(topics) if x == t]
            typed, ids, raw, bad = self.column(t, side).column([values[i] for i in idx])
            self.undecoded += bad
            parts.append((typed, ids, raw))
            order.extend(idx)
        types = {p[0].type for p in parts}
        if len(types) > 1:
            raise InvalidArgumentError(
                f"the topics {', '.join(distinct)} have {side}s of different types: read "
                "one topic at a time (subscribe)")
        inverse = pa.array(sorted(range(len(order)), key=order.__getitem__))
        return tuple(pa.concat_arrays([p[k] for p in parts]).take(inverse)
                     for k in range(3))


def _spark_types(c) -> None:
    """Make ``c``'s Arrow type one Spark reads back the same (timestamps in us, ...), or
    JSON text when Spark has no such type."""
    import pyarrow as pa

    try:
        from pyspark.sql.pandas.types import from_arrow_type, to_arrow_type

        t = to_arrow_type(from_arrow_type(c.arrow_type), timezone="UTC")
    except Exception:  # noqa: BLE001 - a type Spark does not take
        c.problems.append(f"{c.subject}: a type Spark has no equivalent for: written as "
                          "JSON text")
        c.kind, c.arrow_type, c.build_type = "json", pa.string(), pa.string()
        return
    c.arrow_type = t

"""JSON Schema payloads: the JSON document itself after the frame. Decoding prints it as
is (kafka-json-schema-console-consumer prints the deserialized ``JsonNode``; its
deserializer does not validate unless ``json.fail.invalid.schema`` is set); encoding
validates the document against the schema with ``jsonschema`` first, as the serializers
of ``confluent_kafka.schema_registry`` do, then writes it as compact UTF-8 JSON.
References are resolvable under their names (``$ref`` to a reference's name)."""

from __future__ import annotations

import json

from ..errors import SchemaDecodeError


class JsonSchemaCodec:
    kind = "json-schema"

    def __init__(self, schema_text: str, references: dict[str, str] | None = None):
        try:
            self.schema = json.loads(schema_text)
            self.references = {n: json.loads(t) for n, t in (references or {}).items()}
        except ValueError as e:
            raise SchemaDecodeError(f"the JSON Schema is not JSON: {e}") from None
        self._validator = None

    @staticmethod
    def decode(payload: bytes):
        """The JSON document of ``payload``.

        Raises:
            ValueError: not UTF-8 JSON.
        """
        import orjson

        try:
            return orjson.loads(payload)
        except orjson.JSONDecodeError:
            return json.loads(payload)  # integers beyond 64 bits; raises for non-JSON

    @staticmethod
    def to_json_value(doc):
        return doc

    def validator(self):
        if self._validator is None:
            from jsonschema.validators import validator_for
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT7

            cls = validator_for(self.schema)
            resources = [(name, Resource.from_contents(s, default_specification=DRAFT7))
                         for name, s in self.references.items()]
            self._validator = cls(self.schema,
                                  registry=Registry().with_resources(resources))
        return self._validator

    def encode_json(self, text: str) -> bytes:
        """``text`` validated against the schema, as compact JSON bytes.

        Raises:
            ValueError: not JSON, or not valid (jsonschema's best match message).
        """
        from jsonschema.exceptions import best_match

        try:
            doc = json.loads(text)
        except ValueError as e:
            raise ValueError(f"not JSON: {e}") from None
        err = best_match(self.validator().iter_errors(doc))
        if err is not None:
            where = "/".join(map(str, err.absolute_path))
            raise ValueError(f"does not match the JSON Schema"
                             f"{' at ' + where if where else ''}: {err.message}")
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()

"""Schema Registry, offline: the schema store replayed from a log directory's own
``_schemas`` topic (:mod:`.store`, records :mod:`.records`), a live registry's REST API
(:mod:`.rest`), Confluent's wire format (:mod:`.wire`), and the codecs of the three
schema types - Avro with fastavro (:mod:`.avro`), Protobuf with protobuf and grpcio-tools'
protoc (:mod:`.protobuf`), JSON Schema with jsonschema (:mod:`.json_schema`) - behind
one decoder (:mod:`.decoder`), Arrow types for typed exports (:mod:`.arrow`), and the
registration of new schemas as the registry would write them (:mod:`.register`).

    Schema Registry (Confluent)                        kafkalog
    KafkaStore / KafkaStoreReaderThread / InMemoryCache  store.SchemaStore, store.load_store
    SchemaRegistrySerializer, SchemaKey, SchemaValue     records
    AbstractKafkaSchemaSerDe (MAGIC_BYTE, id), MessageIndexes  wire
    AvroMessageFormatter / ProtobufMessageFormatter / JsonSchemaMessageFormatter  decoder
    KafkaSchemaRegistry.register, IncrementalIdGenerator  register
    RestService (the client's REST calls)                rest.RestSchemaSource

The codecs import their libraries (fastavro, protobuf, jsonschema; the
``schema-registry`` extra) when a schema of their type is first parsed.
"""

"""The request and response messages ``kafkalog serve`` speaks, declared once with the
message DSL of :mod:`kafkalog_cli.schema.messages` (construct, compiled per version):
each message's fields as a table, one line a field (``name type versions
[attributes]``, structs' fields indented under them; :func:`~kafkalog_cli.schema.
messages.fields`), as Kafka's protocol documentation lists them.

Each declaration follows Kafka's JSON definition of the message
(``clients/src/main/resources/common/message/<Name>.json``): the same fields, versions,
nullable and tagged versions and defaults, for the whole range Kafka defines, whether or
not the server advertises every version (the served ranges are in :mod:`..apis`). Field
names are Kafka's camelCase names. The ``records`` type is the DSL's (bytes / compact
bytes holding record batches).

One module per API family, as Kafka's handlers divide them: :mod:`.connection` (the
headers, ApiVersions), :mod:`.log` (Produce, Fetch, ListOffsets, DeleteRecords,
OffsetForLeaderEpoch, DescribeProducers), :mod:`.admin` (Metadata, topics, configs, the
cluster's descriptions), :mod:`.groups` (consumer groups and their offsets), :mod:`.txn`
(transactions) and :mod:`.security` (SASL, ACLs, SCRAM credentials).
"""

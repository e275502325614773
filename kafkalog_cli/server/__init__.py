"""``kafkalog serve``: a single-node Kafka endpoint over a log directory.

:mod:`.broker` (asyncio server), :mod:`.kafka_apis` (request handlers), :mod:`.reads`
(Fetch/ListOffsets over the segment read path), :mod:`.catalog` (topics, ids, configs,
producer ids, clean shutdown), :mod:`.storage_adapter` (partitions served by the append engine,
its errors mapped to Kafka's), :mod:`.groups` (the in-memory consumer-group coordinator),
:mod:`.metrics` (BrokerTopicStats).
"""

"""``kafkalog serve``: a single-node Kafka endpoint over a log directory.

:mod:`.broker` (asyncio server), :mod:`.kafka_apis` (request handlers), :mod:`.reads`
(Fetch/ListOffsets over the segment read path), :mod:`.catalog` (topics, ids, configs,
producer ids, clean shutdown), :mod:`.storage_adapter` (the append seam and its stand-in),
:mod:`.metrics` (BrokerTopicStats).
"""

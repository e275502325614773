"""``kafkalog serve``: a single-node Kafka endpoint over a log directory.

:mod:`.broker` (asyncio server), :mod:`.kafka_apis` (request dispatch; metadata, topics),
:mod:`.produce_apis` (Produce), :mod:`.fetch_apis` (Fetch, ListOffsets), :mod:`.admin`
(config, partition, cluster, log-dir and delete-records APIs), :mod:`.group_apis` (group
request handlers), :mod:`.groups` (the consumer-group coordinator) over
:mod:`.classic_group` (the classic group model), :mod:`.txn_apis` (InitProducerId and the
transaction APIs), :mod:`.configs` (topic and broker configs, their layers and
synonyms), :mod:`.reads` (Fetch/ListOffsets over the segment read path), :mod:`.catalog`
(topics, ids, configs, producer ids, clean shutdown), :mod:`.storage_adapter` (partitions
served by the append engine, its errors mapped to Kafka's), :mod:`.metrics`
(BrokerTopicStats).
"""

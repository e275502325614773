"""Magic values, sentinels, suffixes and size limits, each defined once.

Names follow Kafka's ``RecordBatch``, ``LogFileUtils`` and ``DefaultRecordBatch``.
"""

from __future__ import annotations

# -- magic values (RecordBatch.MAGIC_VALUE_V*) ---------------------------------------------
MAGIC_V0 = 0
MAGIC_V1 = 1
MAGIC_V2 = 2

# -- sentinels (RecordBatch.NO_*) ------------------------------------------------------------
NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

# -- attributes of a v2 batch (DefaultRecordBatch) -------------------------------------------
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40

# -- attributes of a v0/v1 message (LegacyRecord) --------------------------------------------
LEGACY_COMPRESSION_CODEC_MASK = 0x07
LEGACY_TIMESTAMP_TYPE_MASK = 0x08

# Compression ids (CompressionType) and their names as Kafka prints them.
CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")
CODEC_IDS = {name: i for i, name in enumerate(CODEC_NAMES)}

# TimestampType names as Kafka prints them.
NO_TIMESTAMP_TYPE = "NoTimestampType"
CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"

# -- sizes ----------------------------------------------------------------------------------
# The layout of a batch (RECORD_BATCH_OVERHEAD, LOG_OVERHEAD, every field's offset) is
# derived from its declaration: kafkalog_cli.schema.record_batch and schema.legacy.
#: Offset index entry (relative offset i32, position i32) and time index entry sizes.
OFFSET_INDEX_ENTRY_SIZE = 8
TIME_INDEX_ENTRY_SIZE = 12
TXN_INDEX_ENTRY_SIZE = 34

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

# -- file names (LogFileUtils, UnifiedLog) ----------------------------------------------------
LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = ".index"
TIME_INDEX_FILE_SUFFIX = ".timeindex"
TXN_INDEX_FILE_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_FILE_SUFFIX = ".snapshot"
DELETED_FILE_SUFFIX = ".deleted"
CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"
CHECKPOINT_FILE_SUFFIX = ".checkpoint"

LOCK_FILE_NAME = ".lock"
CLEAN_SHUTDOWN_FILE_NAME = ".kafka_cleanshutdown"
META_PROPERTIES_FILE_NAME = "meta.properties"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA_FILE = "partition.metadata"

#: Width of the zero-padded base offset in segment file names.
FILENAME_DIGITS = 20

#: Kafka's default max message size for the dump tool (--max-message-size).
DUMP_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
#: Default bound on the decompressed records block of one batch (bytes) for the read-side
#: commands (``--max-decompressed-bytes``); a batch whose block exceeds it is corrupt. Appends
#: (produce, serve's Produce) use the topic's max.message.bytes instead.
DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024
#: Records blocks are decompressed and decoded this many bytes at a time: a block up to this
#: size is decoded in one go; a larger one is streamed, so memory stays a few chunks (plus
#: the one record being read) whatever the block's size.
DECODE_CHUNK_BYTES = 1024 * 1024

#: ``{decoder name: topic}``: the names of DumpLogSegments' decoder flags
#: (``--offsets-decoder`` is ``"offsets"``), in the order Kafka's tool prefers them when
#: several are given. (Here, not in :mod:`~kafkalog_cli.decoders`, so that commands can
#: validate the names without importing every decoder.)
DECODER_NAMES = {
    "offsets": "__consumer_offsets",
    "transaction-log": "__transaction_state",
    "cluster-metadata": "__cluster_metadata",
    "remote-log-metadata": "__remote_log_metadata",
    "share-group-state": "__share_group_state",
}

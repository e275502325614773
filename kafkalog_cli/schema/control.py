"""Control records, after ``ControlRecordType`` and ``EndTransactionMarker``.

    ControlRecordKey =>
      Version => Int16                (0)
      Type => Int16                   (ControlRecordType id)

    EndTransactionMarker (value of ABORT / COMMIT) =>
      Version => Int16                (0)
      CoordinatorEpoch => Int32

KRaft control values (LEADER_CHANGE, SNAPSHOT_HEADER, ...) are flexible generated
messages; their decoders live with the cluster-metadata decoders.
"""

from __future__ import annotations

from . import declared_lazily

#: ControlRecordType ids and the names Kafka prints.
CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}
CONTROL_TYPE_IDS = {name: i for i, name in CONTROL_TYPES.items()}


def _declare() -> dict:
    """The construct declarations (on first use: :func:`~kafkalog_cli.schema.declared_lazily`)."""
    import construct as c

    ControlRecordKey = c.Struct(
        "version" / c.Int16sb,
        "type" / c.Int16sb,
    )

    EndTransactionMarker = c.Struct(
        "version" / c.Int16sb,
        "coordinator_epoch" / c.Int32sb,
    )
    return {"ControlRecordKey": ControlRecordKey, "EndTransactionMarker": EndTransactionMarker}


__getattr__ = declared_lazily(globals(), ("ControlRecordKey", "EndTransactionMarker"), _declare)


def control_type_name(type_id: int) -> str:
    """The name Kafka's ControlRecordType gives ``type_id`` (UNKNOWN otherwise)."""
    return CONTROL_TYPES.get(type_id, "UNKNOWN")

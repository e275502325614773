"""Offline log recovery: the broker's ``LogSegment.recover`` and ``LogLoader``, run
without a broker, as a plan that can be shown (dry run) and then applied with everything
it cuts, removes or rewrites kept in a quarantine that ``undo`` puts back.

Public API::

    from kafkalog_cli.recovery import recover, undo, plan_partition, scan_log

    result = recover(["/var/lib/kafka/data"])            # dry run: RecoveryResult
    result = recover(["/var/lib/kafka/data/t-0"], truncate=True)
    undo(result.partitions[0].quarantine)                 # UndoResult
"""

from ..storage.recovery_scan import ScanResult, scan_log, walk_log
from .model import Action, PartitionReport, RecoveryResult, SegmentReport
from .planner import plan_partition
from .restore import UndoResult, undo
from .runner import recover, resolve_partition_dirs

__all__ = [
    "Action", "PartitionReport", "RecoveryResult", "ScanResult", "SegmentReport",
    "UndoResult", "plan_partition", "recover", "resolve_partition_dirs", "scan_log",
    "undo", "walk_log",
]

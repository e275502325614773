"""serve's log retention task, after ``LogManager``'s ``kafka-log-retention`` schedule
(``cleanupLogs`` every ``log.retention.check.interval.ms`` after
``log.initial.task.delay.ms``) and ``LocalLog.deleteSegmentFiles``' ``delete-file`` task
(the renamed files removed ``file.delete.delay.ms`` later).

The decision and the renames are :mod:`kafkalog_cli.storage.retention`'s; this module
schedules them on the event loop. Each partition's pass runs on the event-loop thread
(the thread that appends, so no lock is needed: a pass is in-memory work, a ``stat`` per
segment, one time-index read and four renames per deleted segment) and the loop is
yielded to between partitions; the checkpoint and the removal of the renamed files run on
worker threads.
"""

from __future__ import annotations

import asyncio
import logging

from ..storage.retention import RetentionConfig, delete_old_segments, remove_deleted_files
from .configs import INTERNAL_BROKER_CONFIGS

log = logging.getLogger("kafkalog.serve")


class RetentionTask:
    """The retention schedule of one served log directory (``catalog``: a writable
    :class:`~.catalog.LogDirCatalog`). :meth:`start` then :meth:`stop`."""

    def __init__(self, catalog):
        self.catalog = catalog
        self._task: asyncio.Task | None = None
        self._deletes: set[asyncio.Task] = set()
        #: segments deleted since the start
        self.deleted_segments = 0

    def _ms(self, name: str) -> int:
        """A broker config (ms): its value, else its default (an internal one's too)."""
        v = self.catalog.broker_configs.value(name)
        return int(INTERNAL_BROKER_CONFIGS[name][0] if v is None else v)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        await asyncio.sleep(self._ms("log.initial.task.delay.ms") / 1000)
        while True:
            try:
                await self.cleanup_logs()
            except Exception as e:  # keep serving; say so
                log.error("log retention pass failed: %s", e)
            await asyncio.sleep(self._ms("log.retention.check.interval.ms") / 1000)

    async def cleanup_logs(self) -> int:
        """LogManager.cleanupLogs: ``deleteOldSegments`` on every served partition whose
        ``cleanup.policy`` the broker trims (the retention thread takes those without
        ``compact``; those with ``compact,delete`` the log cleaner's deletion pass does, and
        serve's cleaner (:mod:`.log_cleaner`) only compacts, so this task takes them too). Writes the checkpoints when a log start
        offset moved. Returns the segments deleted."""
        total = 0
        for topic in list(self.catalog.topics.values()):
            for p, part in list(topic.partitions.items()):
                lg = part.log
                if lg.closed:
                    continue
                try:
                    config = RetentionConfig.of(lg.config)
                    if not config.retention_task_applies:
                        continue
                    result = delete_old_segments(lg, config=config)
                except Exception as e:  # one partition's failure is not the others'
                    log.error("log retention of %s-%d failed: %s", topic.name, p, e)
                    continue
                if result.deleted:
                    total += result.deleted
                    self._schedule_delete(result)
                    for d in result.plan.deletions:
                        log.info("deleting segment %d of %s-%d (%s, %d bytes); log start "
                                 "offset %d", d.base_offset, topic.name, p, d.reason, d.size,
                                 result.plan.log_start_offset)
                await asyncio.sleep(0)
        if total:
            self.deleted_segments += total
            try:
                await asyncio.to_thread(self.catalog.prepare_checkpoint())
            except Exception as e:
                log.error("checkpoint after log retention failed: %s", e)
        return total

    def _schedule_delete(self, result) -> None:
        """scheduleOnce("delete-file", ..., file.delete.delay.ms)."""
        async def later():
            await asyncio.sleep(result.file_delete_delay_ms / 1000)
            try:
                await asyncio.to_thread(remove_deleted_files, result.renamed, result.segments)
            except OSError as e:
                log.error("removing deleted segment files failed: %s", e)

        t = asyncio.create_task(later())
        self._deletes.add(t)
        t.add_done_callback(self._deletes.discard)

    async def stop(self) -> None:
        """Cancel the schedule and the pending removals (KafkaScheduler drops delayed
        tasks at shutdown); the renamed files left are removed when the log is next
        opened."""
        tasks = [t for t in (self._task, *self._deletes) if t is not None]
        for t in tasks:
            t.cancel()
        for t in tasks:
            try:
                await t
            except (asyncio.CancelledError, Exception):
                pass
        self._task = None

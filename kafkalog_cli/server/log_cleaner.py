"""``kafkalog serve``'s log cleaner, after Kafka's ``LogCleaner`` (its one
``CleanerThread``) and ``LogCleanerManager.grabFilthiestCompactedLog``.

Every ``log.cleaner.backoff.ms`` (when the last pass cleaned nothing; at once after one
that did), while ``log.cleaner.enable`` is true: among the served partitions whose topic's
``cleanup.policy`` holds ``compact``, the one with the largest dirty ratio of those above
their ``min.cleanable.dirty.ratio`` or past their ``max.compaction.lag.ms``
(:func:`~kafkalog_cli.storage.cleaner.cleanable_offsets`, ``min.compaction.lag.ms``
applied) is cleaned once
(:class:`~kafkalog_cli.storage.cleaner.Cleaner`, a map of
``log.cleaner.dedupe.buffer.size`` / ``log.cleaner.threads`` bytes), and its
``cleaner-offset-checkpoint`` entry moved.

Threads: the log's state is read and each cleaned segment swapped in on the event loop
(the thread that appends, reads and rolls: what the broker's log lock guards); the file
work (reading the rolled segments, writing the ``.cleaned`` ones, removing the
``.deleted`` ones) runs on a daemon thread of its own, one log at a time. The active
segment is never cleaned. :meth:`LogCleanerTask.stop` makes a clean under way stop at its
next batch (its ``.cleaned`` files removed) and waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time

from ..errors import KafkalogError, LogCleaningAbortedError
from ..storage.cleaner import (
    CleanConfig,
    Cleaner,
    is_cleanable,
    prepare_clean,
    read_cleaner_checkpoint,
    swap_in,
    update_cleaner_checkpoint,
)
from .workers import WorkerPool

log = logging.getLogger("kafkalog.serve")


def _float(value, default: float) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


class LogCleanerTask:
    """The cleaner of one served log directory (``catalog``: a writable
    :class:`~.catalog.LogDirCatalog`). :meth:`run` is the task's coroutine."""

    def __init__(self, catalog):
        self.catalog = catalog
        self.enabled = str(catalog.broker_configs.value("log.cleaner.enable")).lower() == "true"
        self._stopping = threading.Event()
        self.cleaner: Cleaner | None = None
        self._refresh()
        self._pool = WorkerPool(1, name="kafkalog-cleaner")
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        #: cleans done since the start; ``cleaned_event`` is set after each (tests wait)
        self.cleaned = 0
        self.cleaned_event = threading.Event()
        #: partitions a clean failed on (LogCleanerManager.markPartitionUncleanable):
        #: not cleaned again until a restart
        self.uncleanable: set = set()

    def start(self) -> None:
        """Start the cleaner's task (on the running event loop) when log.cleaner.enable."""
        if self.enabled:
            self._task = asyncio.create_task(self.run())

    def _refresh(self) -> None:
        """Read the dynamic cleaner configs (LogCleaner.reconfigure): the backoff, and a
        new map when its memory or load factor changed."""
        bc = self.catalog.broker_configs
        self.backoff_s = int(bc.value("log.cleaner.backoff.ms")) / 1000
        threads = max(int(bc.value("log.cleaner.threads")), 1)
        memory = int(bc.value("log.cleaner.dedupe.buffer.size")) // threads
        factor = _float(bc.value("log.cleaner.io.buffer.load.factor"), 0.9)
        if self.cleaner is None or (memory, factor) != self._map_config:
            self._map_config = (memory, factor)
            self.cleaner = Cleaner(memory, factor, fsync=self.catalog.manager.fsync)
            self.cleaner.check_done = self._check_done

    def _check_done(self) -> None:
        if self._stopping.is_set():
            raise LogCleaningAbortedError("the server is stopping")

    async def run(self) -> None:
        """CleanerThread.doWork until :meth:`stop`: a pass, then the backoff when it
        cleaned nothing."""
        while not self._stopping.is_set():
            try:
                did = await self.clean_filthiest_log()
            except Exception as e:  # keep serving; say so (the broker marks the dir failed)
                log.error("log cleaning failed: %s", e)
                did = False
            if not did and not self._stopping.is_set():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.backoff_s)

    async def stop(self, wait_s: float = 10.0) -> None:
        """Stop a clean under way at its next batch (its ``.cleaned`` files removed) and
        wait for it, at most ``wait_s`` seconds (then it is cancelled)."""
        self._stopping.set()
        self._wake.set()
        if self._task is not None:
            _, pending = await asyncio.wait([self._task], timeout=wait_s)
            for t in pending:
                t.cancel()
        self._pool.shutdown()

    def _forget(self, tps) -> None:
        self._reset([(tp, None) for tp in tps])

    def _reset(self, entries) -> None:
        for tp, offset in entries:
            update_cleaner_checkpoint(self.catalog.log_dir, tp, offset,
                                      fsync=self.catalog.manager.fsync)

    def _compacted_logs(self):
        cat = self.catalog
        for topic in list(cat.topics.values()):
            eff = cat.effective_configs(topic)
            if "compact" not in eff.get("cleanup.policy", "").split(","):
                continue
            for part in list(topic.partitions.values()):
                lg = getattr(part, "log", None)
                if lg is not None and not lg.closed and \
                        lg.topic_partition not in self.uncleanable:
                    yield eff, lg

    async def clean_filthiest_log(self) -> bool:
        """One pass: clean the filthiest compacted log. True when a log was cleaned."""
        if not self.enabled:
            return False
        self._refresh()
        now = self.catalog.manager.clock.milliseconds()
        ckpt = await self._pool.run(read_cleaner_checkpoint, self.catalog.log_dir)
        stale = [tp for tp in ckpt if not self.catalog.exists(tp.topic, tp.partition)]
        if stale:  # deleted partitions (LogCleaner.updateCheckpoints' removal)
            await self._pool.run(self._forget, stale)
        best, forced = None, []
        for eff, lg in self._compacted_logs():
            snap = prepare_clean(
                lg, last_clean_offset=ckpt.get(lg.topic_partition), now=now,
                min_compaction_lag_ms=int(eff.get("min.compaction.lag.ms", 0)),
                max_compaction_lag_ms=int(eff.get("max.compaction.lag.ms", 2**63 - 1)))
            if snap is None:
                continue
            tc = snap.to_clean
            if tc.force_update_checkpoint:  # a checkpoint outside the log: reset
                forced.append((lg.topic_partition, tc.first_dirty_offset))
            ratio = _float(eff.get("min.cleanable.dirty.ratio"), 0.5)
            if is_cleanable(tc, ratio) and \
                    (best is None or tc.cleanable_ratio > best[2].to_clean.cleanable_ratio):
                best = (eff, lg, snap)
        if forced:
            await self._pool.run(self._reset, forced)
        if best is None:
            return False
        eff, lg, snap = best
        config = CleanConfig(segment_bytes=lg.config.segment_bytes,
                             segment_index_bytes=lg.config.segment_index_bytes,
                             index_interval_bytes=lg.config.index_interval_bytes,
                             delete_retention_ms=int(eff.get("delete.retention.ms", 86400000)))
        loop = asyncio.get_running_loop()
        fsync = self.catalog.manager.fsync

        def replace(group, base):  # on the cleaner's thread
            if self._stopping.is_set():
                return False

            async def swap():
                return None if lg.closed else swap_in(lg, group, base, fsync=fsync)

            deleted = asyncio.run_coroutine_threadsafe(swap(), loop).result()
            for p in deleted or ():
                try:
                    os.unlink(p)
                except OSError:
                    pass
            return deleted is not None

        def work():
            end, stats = self.cleaner.clean(
                snap.segments, snap.to_clean, config=config, now=now,
                aborted_between=snap.aborted_between,
                last_records_of_active_producers=snap.last_records, replace=replace,
                high_watermark=snap.high_watermark)
            update_cleaner_checkpoint(self.catalog.log_dir, lg.topic_partition, end,
                                      fsync=fsync)
            return end, stats

        started = time.monotonic()
        try:
            end, stats = await self._pool.run(work)
        except LogCleaningAbortedError:
            return False
        except (KafkalogError, OSError) as e:
            now_bases = {s.base_offset for s in lg.segments}
            if lg.closed or any(s.base_offset not in now_bases for s in snap.segments):
                # retention (or a deletion) took segments the clean was reading: retried
                # at the next pass (the broker pauses cleaning instead)
                log.info("cleaning %s stopped: its segments changed (%s)",
                         lg.topic_partition, e)
                return False
            log.error("cleaning %s failed, not cleaned again until a restart: %s",
                      lg.topic_partition, e)
            self.uncleanable.add(lg.topic_partition)
            return False
        log.info("cleaned %s up to offset %d in %.2f s: %d of %d records kept (%d of %d "
                 "bytes), %d segments", lg.topic_partition, end, time.monotonic() - started,
                 stats.messages_written, stats.messages_read, stats.bytes_written,
                 stats.bytes_read, stats.segments_cleaned)
        self.cleaned += 1
        self.cleaned_event.set()
        return True

"""A small pool of daemon threads for the CPU-heavy part of a request (the validation of a
Produce batch: decompression and a walk over every record, as ``LogValidator`` does), so
the event loop keeps answering other connections meanwhile - a broker has
``num.io.threads`` request handler threads for the same reason.

The threads are daemons: a validation still running when the server stops (a batch of
millions of records takes seconds) is abandoned with the process instead of delaying its
exit, as ``concurrent.futures`` workers would.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time

#: threads validating Produce batches at once (more queue): bounds the memory and CPU that
#: validations take together, whatever the number of connections
VALIDATION_THREADS = 4


class WorkerPool:
    """``await pool.run(fn, *args)``: ``fn(*args)`` on one of ``size`` daemon threads; its
    result or exception comes back to the awaiting coroutine."""

    def __init__(self, size: int = VALIDATION_THREADS, name: str = "kafkalog-worker"):
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True)
                         for i in range(size)]
        for t in self._threads:
            t.start()

    async def run(self, fn, *args):
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._jobs.put((loop, future, fn, args))
        return await future

    def shutdown(self, wait_s: float = 0.0) -> None:
        """Let the threads end once the jobs queued before this call are done; wait up to
        ``wait_s`` seconds (in all) for them to end."""
        for _ in self._threads:
            self._jobs.put(None)
        deadline = time.monotonic() + wait_s
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            loop, future, fn, args = job
            if future.cancelled():
                continue
            try:
                result, error = fn(*args), None
            except BaseException as e:  # handed to the awaiting coroutine
                result, error = None, e
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass


def _settle(future: asyncio.Future, result, error) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)

"""A long-lived server's background jobs: each a thread running its job on an interval, and at
once when woken, until closing."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class BackgroundJobs:
    """Threads that run jobs until ``stop``; a job that raises is logged and run again later."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._wakes: list[threading.Event] = []

    def spawn(
        self,
        name: str,
        interval: float,
        job: Callable[[], object],
        *,
        first_run: bool = False,
        wake: threading.Event | None = None,
    ) -> None:
        """Run ``job`` every ``interval`` seconds (first at once if ``first_run``), and as soon
        as ``wake`` is set (which this clears)."""
        if wake is not None:
            self._wakes.append(wake)

        def stopped_after_wait() -> bool:
            if wake is None:
                return self._stop.wait(interval)
            wake.wait(interval)
            wake.clear()
            return self._stop.is_set()

        def run() -> None:
            try:
                job()
            except Exception:  # a background job must not die silently nor kill the server
                log.exception("%s failed; will retry", name)

        def loop() -> None:
            if first_run and not self._stop.is_set():
                run()
            while not stopped_after_wait():
                run()

        thread = threading.Thread(target=loop, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self) -> None:
        """No job starts again (one under way finishes)."""
        self._stop.set()
        for wake in self._wakes:
            wake.set()

    def join(self, timeout: float) -> None:
        """Wait for the jobs under way, up to ``timeout`` seconds each."""
        for thread in self._threads:
            thread.join(timeout=timeout)

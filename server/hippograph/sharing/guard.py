"""The running owner keeps its lock file and owner.json in place, repairing what was removed or garbled.

Without them every other process is locked out: a removed lock file lets the next process
take a fresh lock and fail on the graph ("Could not set lock on file"); a missing or garbled
owner.json leaves proxies with no address to call. The owner checks both every second.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import filelock

from hippograph.sharing.ownership import PRIVATE_FILE_MODE, OwnerInfo, lock_path, publish_owner, read_owner

log = logging.getLogger(__name__)

_INTERVAL_S = 1.0


class OwnerGuard:
    """A thread of the owner's that puts back its lock file and owner.json."""

    def __init__(self, data_dir: Path, info: OwnerInfo, held: filelock.BaseFileLock) -> None:
        self._data_dir, self._info, self._held = data_dir, info, held
        self._extra: list[filelock.BaseFileLock] = []  # locks on lock files made again
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hippograph-owner-guard", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(_INTERVAL_S):
            try:
                self.repair()
            except Exception:  # the guard must not die: the next round tries again
                log.exception("could not check the owner's files in %s", self._data_dir)

    def repair(self) -> list[str]:
        """Put back what is missing or wrong; what was repaired."""
        repaired = []
        if read_owner(self._data_dir) != self._info:
            publish_owner(self._data_dir, self._info)
            repaired.append("owner.json")
        if not self._lock_file_is_ours():
            relock = filelock.FileLock(
                lock_path(self._data_dir), timeout=0, mode=PRIVATE_FILE_MODE, thread_local=False
            )
            try:
                relock.acquire()
            except filelock.Timeout:
                log.error(
                    "another process locked a new %s while this one owns the data dir",
                    lock_path(self._data_dir),
                )
            else:
                self._extra.append(relock)
                repaired.append("lock file")
        if repaired:
            log.warning("repaired %s in %s", " and ".join(repaired), self._data_dir)
        return repaired

    def _lock_file_is_ours(self) -> bool:
        try:
            on_disk = os.stat(lock_path(self._data_dir)).st_ino
        except FileNotFoundError:
            return False
        held = [lock for lock in (self._held, *self._extra) if lock.is_locked]
        return any(os.fstat(fd).st_ino == on_disk for lock in held if (fd := _fd(lock)) is not None)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for lock in self._extra:
            lock.release()


def _fd(lock: filelock.BaseFileLock) -> int | None:
    fd = lock._context.lock_file_fd  # filelock exposes no public accessor for the held descriptor
    return fd if isinstance(fd, int) else None

"""Whether the graph index holds every commit of its graph after a process died without closing.

A stdio MCP client kills its server 2-4 s after closing stdin; without this, the next open
builds the index again from the graph (~95 s at 1M facts). The index file is kept when it
*follows* the graph: it was opened with the graph whose Meta token it recorded (``begin``), on
the same boot of the machine, and no commit was cut off between the two: ``mark_pending`` is
written before each graph commit that may change the index and removed in the SQLite
transaction that hands the index that commit's changes (``published``). SQLite's write-ahead log
keeps each of those transactions whole through a kill; without fsync, not through a crash of the
machine, hence the boot. The clean-close token (``GraphIndex.token``) stays the first test.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

_FOLLOWS, _BOOT, _PENDING = "follows_graph_token", "opened_in_boot", "commit_pending"
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


class IndexTrust:
    """The rows of the index's meta table that say which graph it follows."""

    def __init__(self, db: sqlite3.Connection, lock: threading.RLock) -> None:
        self._db, self._lock = db, lock
        self._pending = False  # _PENDING is in the file

    def follows(self, token: str) -> bool:
        """Whether the file holds every commit of the graph whose Meta token is ``token``."""
        keys = (_FOLLOWS, _BOOT, _PENDING)
        with self._lock:
            rows = dict(self._db.execute("SELECT key, value FROM meta WHERE key IN (?, ?, ?)", keys))
        boot = boot_id()
        opened_with = (rows.get(_FOLLOWS), rows.get(_BOOT))
        return bool(token and boot) and opened_with == (token, boot) and _PENDING not in rows

    def begin(self, token: str) -> None:
        """Record that the file holds the graph whose Meta token is ``token``, as opened now
        (inside the caller's SQLite transaction)."""
        opened_with = ((_FOLLOWS, token), (_BOOT, boot_id()))
        self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", opened_with)
        self._db.execute("DELETE FROM meta WHERE key = ?", (_PENDING,))  # a killed process's too

    def mark_pending(self) -> None:
        """Before a graph commit: until its changes are published, a kill leaves the file behind."""
        with self._lock:
            if not self._pending:
                self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (_PENDING,))
                self._pending = True

    def published(self) -> None:
        """Inside the SQLite transaction that takes a commit's changes: nothing is pending once it
        commits (``confirm``)."""
        if self._pending:
            self._db.execute("DELETE FROM meta WHERE key = ?", (_PENDING,))

    def confirm(self) -> None:
        """That transaction committed."""
        self._pending = False


def boot_id() -> str:
    """This boot of the machine ('' where the platform does not say: a kill then costs a build)."""
    try:
        return _BOOT_ID.read_text(encoding="ascii").strip()
    except OSError:
        return ""

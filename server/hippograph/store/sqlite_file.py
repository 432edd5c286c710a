"""Opening the small SQLite files whose loss loses nothing memory believes (topics, gaps).

They need no durability of their own (no fsync); deleted rows are overwritten
(``secure_delete``), so a purged fact's trace leaves the file. A file that cannot be read, or is
of another layout, is made afresh: what it held is found again (``consolidate``) or was only a
log. The rollback journal is a file beside it while a transaction lasts (``DELETE``; ~50 µs more
a commit than in memory): held in memory, a consolidate's rewrite of the topics of 100k facts
kept the whole old file (~35 MB; ~350 at 1M) in the server's heap for the transaction. A purge's
old pages pass through that file, which is then deleted, not overwritten: no file holds them
after, though the disk's free blocks may, as with any file a store rewrites.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

log = logging.getLogger(__name__)

_PRAGMAS = ("journal_mode=DELETE", "synchronous=OFF", "secure_delete=ON")


def connect(path: Path, schema: str, *, layout: int) -> sqlite3.Connection:
    """A connection (autocommit, shared across threads: callers hold their own lock) to ``path``,
    with ``schema`` made; the file is made afresh if unreadable or of a layout other than ``layout``."""
    try:
        return _connect(path, schema, layout)
    except sqlite3.DatabaseError as err:
        log.warning("%s is unreadable (%s): starting it afresh", path, err)
        path.unlink(missing_ok=True)
        return _connect(path, schema, layout)


def _connect(path: Path, schema: str, layout: int) -> sqlite3.Connection:
    db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
    try:
        for pragma in _PRAGMAS:
            db.execute(f"PRAGMA {pragma}")
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version != layout and db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise sqlite3.DatabaseError(f"its layout is {version}, not {layout}")
        db.executescript(schema)
        db.execute(f"PRAGMA user_version = {layout}")
    except BaseException:
        db.close()
        raise
    return db

"""A graph file handled outside a session: opened with its log replayed, one statement's result,
an export imported into a new file, a checkpoint in a page cache of a given size. Used by the
session (``kuzu_session``) and the engine upgrade, which open files of their own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import ladybug

from hippograph.domain.errors import InternalError, StoreError
from hippograph.store.cache_budget import budget_for
from hippograph.store.graph_copy import POOL_FULL

log = logging.getLogger(__name__)

# How many times a page cache is doubled to replay or checkpoint a graph's log before giving up.
REPLAY_DOUBLINGS = 5

__all__ = [
    "REPLAY_DOUBLINGS",
    "checkpoint_closed",
    "checkpoint_in",
    "import_database",
    "one_result",
    "open_database",
]


def one_result(result: ladybug.QueryResult | list[ladybug.QueryResult]) -> ladybug.QueryResult:
    """The result of one statement (kuzu returns a list only for a string of several)."""
    if isinstance(result, list):
        raise InternalError(f"one Kùzu statement was expected, {len(result)} ran")
    return result


def import_database(
    export: Path, db: ladybug.Database, check: Callable[[ladybug.Connection], None] | None = None
) -> None:
    """IMPORT the directory ``export`` into the new, empty database ``db``, ``check`` what it
    holds, checkpoint it and close it: the file is then whole by itself (a rename moves the file,
    not its log)."""
    conn = ladybug.Connection(db)
    try:
        one_result(conn.execute(f"IMPORT DATABASE '{export}'")).close()
        if check is not None:
            check(conn)
        conn.execute("CHECKPOINT")
    finally:
        conn.close()
        db.close()


def checkpoint_in(path: Path, pool: int, max_db_size: int) -> bool:
    """Open the database with a ``pool``-byte page cache, checkpoint and close: whether it fit."""
    try:
        db = ladybug.Database(str(path), max_db_size=max_db_size, buffer_pool_size=pool)
    except RuntimeError as err:
        if POOL_FULL in str(err):
            return False
        raise
    connection = ladybug.Connection(db)
    try:
        connection.execute("CHECKPOINT")
        return True
    except RuntimeError as err:
        if POOL_FULL in str(err):
            return False
        raise
    finally:
        connection.close()
        db.close()


def checkpoint_closed(path: Path, pool: int, max_db_size: int, doublings: int) -> bool:
    """Checkpoint the closed file at ``path`` in a pool doubled from ``pool`` until it fits."""
    for _ in range(doublings):
        pool *= 2
        if checkpoint_in(path, pool, max_db_size):
            return True
    log.warning("the graph's log did not fit a %d MiB page cache: the next open replays it", pool >> 20)
    return False


def open_database(path: Path, buffer_pool_bytes: int, max_db_size: int) -> ladybug.Database:
    """The database, its WAL replayed (and checkpointed) whatever pool the replay needed."""
    pool = buffer_pool_bytes
    for _ in range(REPLAY_DOUBLINGS):
        try:
            db = ladybug.Database(str(path), max_db_size=max_db_size, buffer_pool_size=pool)
        except RuntimeError as err:
            if POOL_FULL not in str(err):
                raise
            pool *= 2
            log.warning("replaying the graph's log needs more memory: trying a %d MiB pool", pool >> 20)
            continue
        if pool == buffer_pool_bytes:
            return db
        db.close()  # the replay is checkpointed: the configured pool holds what is left
        break
    else:
        raise StoreError(
            f"cannot open the graph store {path}: replaying its log needs more than a "
            f"{pool >> 21} MiB page cache. Nothing is lost: open it once with "
            f"HIPPOGRAPH_MEMORY_BUDGET_BYTES at least {budget_for(pool)} (the graph's page "
            "cache is half of it); later opens need no more."
        )
    return ladybug.Database(str(path), max_db_size=max_db_size, buffer_pool_size=buffer_pool_bytes)

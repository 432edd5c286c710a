"""A thread's transaction on the memory's PostgreSQL database, for the graph store's parts.

``transaction()`` holds one pooled connection for the calling thread; every call the thread
makes inside it runs in that transaction, and outside one, each call is a transaction of its own.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from hippograph.store.pg_database import PgDatabase

_BATCH = 2048  # rows a whole-table read fetches at a time
_CURSORS = itertools.count()  # server-side cursors' names (unique in a connection)


class PgSession:
    """The graph store's access to its database: the thread's transaction, reads, streams."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db
        self._local = threading.local()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together or not at all (a transaction inside one joins it)."""
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        with self._db.transaction() as conn:
            self._local.conn = conn
            try:
                yield
                rider = self.drop_rider()
                if rider is not None:  # committed with this write, or not at all
                    conn.execute(*rider)
            finally:
                self._local.conn = None

    def commit_with(self, query: str, params: Sequence[Any]) -> None:
        """Run this statement inside the next transaction this thread commits (none, if it
        commits none before ``drop_rider``): a record that must exist exactly when the write does."""
        self._local.rider = (query, tuple(params))

    def has_rider(self) -> bool:
        """Whether this thread's ``commit_with`` statement still waits for a commit."""
        return getattr(self._local, "rider", None) is not None

    def drop_rider(self) -> tuple[str, tuple[Any, ...]] | None:
        """Forget this thread's ``commit_with`` statement, and return it if it was still waiting."""
        rider: tuple[str, tuple[Any, ...]] | None = getattr(self._local, "rider", None)
        self._local.rider = None
        return rider

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        """The thread's transaction's connection, or a transaction of the call's own."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
        else:
            with self._db.transaction() as own:
                yield own

    def _rows(self, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one statement, in the thread's transaction or, outside one, on its own."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return list(conn.execute(query, params).fetchall())
        with self._db.statement() as own:
            return list(own.execute(query, params).fetchall())

    def _stream(self, query: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
        """Rows of a read of any size, ``_BATCH`` at a time (a server-side cursor)."""
        with self._conn() as conn, conn.cursor(name=f"hg_read_{next(_CURSORS)}") as cur:
            cur.execute(query, params)
            while batch := cur.fetchmany(_BATCH):
                yield from batch

"""The questions memory could not answer with confidence, counted per scope (``gaps.sqlite``).

``review`` lists them as gaps: what a user asks about that memory does not hold yet. Only a
question the secret screen passes is kept, at most ``KEPT`` a scope (the least recently asked
go first), and a purge empties the log (a question may quote what was erased). Losing the file
loses nothing memory believes (``sqlite_file``).
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from pathlib import Path

from hippograph.store import sqlite_file
from hippograph.store.seam import Gap

KEPT = 1000  # questions kept a scope
_SCHEMA = """
CREATE TABLE IF NOT EXISTS gap (
    scope TEXT NOT NULL, key TEXT NOT NULL, question TEXT NOT NULL, asked INTEGER NOT NULL,
    last TEXT NOT NULL, PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS gap_last ON gap (scope, last);
"""


def question_key(question: str) -> str:
    """What makes two askings one question: the same words in any case and spacing."""
    return " ".join(question.casefold().split())


class GapLog:
    """The log in one SQLite file; every method is thread-safe."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db = sqlite_file.connect(path, _SCHEMA, layout=1)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def record(self, scope: str, question: str, at: str) -> None:
        """Count one more asking of ``question`` in ``scope`` (the same words in any case and
        spacing are one question), at ``at`` (ISO 8601)."""
        key = question_key(question)
        with self._lock:
            self._db.execute("BEGIN")
            with self._db:  # commits, or rolls back on an error
                self._db.execute(
                    "INSERT INTO gap VALUES (?, ?, ?, 1, ?) ON CONFLICT (scope, key) DO UPDATE SET "
                    "asked = asked + 1, last = max(last, excluded.last), question = excluded.question",
                    (scope, key, question, at),
                )
                self._db.execute(
                    "DELETE FROM gap WHERE scope = ? AND key NOT IN "
                    "(SELECT key FROM gap WHERE scope = ? ORDER BY last DESC, key LIMIT ?)",
                    (scope, scope, KEPT),
                )

    def gaps(self, scopes: Collection[str], *, limit: int) -> list[Gap]:
        """The questions of ``scopes``, the most asked first, then the most recent."""
        marks = ", ".join("?" * len(scopes))
        with self._lock:
            rows = self._db.execute(
                f"SELECT scope, question, asked, last FROM gap WHERE scope IN ({marks}) "
                "ORDER BY asked DESC, last DESC LIMIT ?",
                (*scopes, limit),
            ).fetchall()
        return [Gap(str(s), str(q), int(n), str(last)) for s, q, n, last in rows]

    def clear(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM gap")
